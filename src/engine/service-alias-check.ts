// A job's rows are scoped by the service's base URL, so the same service reached through another
// address (`localhost` for `127.0.0.1`, a second DNS name, a proxy) looks new, and every job sent
// through the first address would be paid for again. Spellings of one URL are merged already
// (canonicalBaseUrl); aliases cannot be told apart from a real second service, so reel asks.
import type { Job } from "../manifest/index.js";
import type { JobStore } from "../state/job-store.js";

/** The flag that confirms: these jobs are to be made again on this service, paid again. */
export const NEW_SERVICE_FLAG = "--new-service";

/**
 * The refusal for `jobs` when some of them were sent to another service and never to this one, or
 * undefined. `ignore`: services whose work costs nothing (the sandbox: trying a campaign on it first
 * must not block the real run).
 */
export async function sentElsewhereProblem(
  store: JobStore,
  jobs: readonly Job[],
  here: string,
  ignore: readonly string[],
): Promise<string | undefined> {
  const found = await store.listSentElsewhere(jobs, ignore);
  if (found.length === 0) return undefined;
  const first = found[0]!;
  const others = [...new Set(found.map((f) => f.baseUrl))];
  const n = found.length;
  return (
    `${n} ${n === 1 ? "job was" : "jobs were"} already sent to ${others.join(", ")} (e.g. ${first.key}), not to ${here}. ` +
    `If it is the same service under another address, use the address it was run with (--base-url ${first.baseUrl}): nothing is paid again. ` +
    `If it really is another service, add ${NEW_SERVICE_FLAG} to generate ${n === 1 ? "it" : "them"} there too (paid again; the videos already made are kept, under <id>.<hash>.mp4).`
  );
}
