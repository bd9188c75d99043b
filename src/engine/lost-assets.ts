// Assets deleted on the service since reel uploaded them. A task that failed because an asset it
// names is missing there makes reel's record of that upload stale: it is forgotten (so the asset is
// uploaded again) and the job tries once more.
import { classify } from "../client/index.js";
import type { Job } from "../manifest/index.js";
import type { JobRow } from "../state/job-store.js";
import type { EngineContext } from "./context.js";
import { refsOf } from "./submit.js";
import { claimLost } from "./submit-ends.js";

/**
 * A task that failed because an asset it names is missing or invalid on the service (deleted
 * there since reel uploaded it): reel's record of that upload is stale. Forget it, so the asset is
 * uploaded again, and let the job try once more (a counted attempt). True when it will.
 * Every asset reel made for the job is checked, not only the one named: a task fails on the first
 * lost asset it meets, and a retry with another lost one would fail again.
 */
export async function forgetLostAssets(ctx: EngineContext, job: Job, row: JobRow): Promise<boolean> {
  const { store, lostAssets, resolver } = ctx;
  if (row.state !== "Fail" || row.fail_kind !== "task" || row.attempts >= ctx.options.maxAttempts)
    return false;
  // Only assets reel made itself can be made again (an `{asset: N}` of the manifest cannot), and
  // only those the service no longer knows: a reason that merely names an asset ("audio asset 5
  // is too long") must not cost a second submission. One another job found lost already counts
  // (its record is gone by now): this job was submitted with it before that was known.
  const named = [...(row.error ?? "").matchAll(/asset (\d+)/gi)].map((m) => m[1]!);
  const knownLost = named.filter((id) => lostAssets.has(id));
  const suspects: string[] = [];
  for (const id of named) if (!lostAssets.has(id) && (await store.madeAsset(id))) suspects.push(id);
  if (knownLost.length === 0 && suspects.length === 0) return false;
  const own: string[] = [];
  for (const ref of refsOf(job)) {
    const id = await resolver.knownId(ref);
    if (id !== undefined) own.push(id);
  }
  const lost = [...knownLost];
  for (const id of new Set([...suspects, ...own])) {
    if (lostAssets.has(id)) continue;
    try {
      await ctx.client.getAsset(id, { signal: ctx.signals.stop.signal });
    } catch (error) {
      if (classify(error).reason === "not-found") lost.push(id);
    }
  }
  if (lost.length === 0) return false;
  for (const assetId of lost) {
    if (lostAssets.has(assetId)) continue;
    lostAssets.add(assetId);
    await resolver.forget(assetId);
  }
  // A compare-and-set: the row read by the caller may have moved on (another process retried it).
  if (!(await store.markPending(row.id, `asset ${lost.join(", ")} lost on the service: uploading again`))) {
    await claimLost(ctx, row.id);
    return false;
  }
  ctx.progress.event({
    stage: "note",
    key: row.job_key,
    detail: `failed because asset ${lost.join(", ")} is missing on the service; uploading it again and retrying once`,
  });
  return true;
}
