// What a person does about failed jobs, as steps with codes: the run's summary (drivers/next-steps.ts)
// and the report's banner (report/html-report.ts) both say them, so this sits below both. Each
// step names what would change the outcome: advice to do what would send nothing (--retry-failed
// on a job that used every attempt) would only send the user round.
import { agree, plural } from "../plural.js";
import { INJECTED_FAILURE_REASON } from "../sandbox/options.js";
import type { JobRow } from "../state/job-store.js";

export type NextStepCode =
  | "FIX_OR_RETRY_FAILED"
  | "EDIT_FAILED"
  | "EDIT_REFUSED"
  | "REPLACE_ASSET"
  | "FIX_AND_RERUN"
  | "SANDBOX_FAILURE"
  | "RESUBMIT_UNCERTAIN"
  | "RERUN_TO_DOWNLOAD"
  | "RERUN_TO_RESUME"
  | "RERUN_TO_FINISH"
  | "RAISE_BUDGET"
  | "FIX_KEY"
  | "ADD_CREDITS"
  | "CHECK_SERVICE"
  | "FREE_DISK";

export interface NextStep {
  readonly code: NextStepCode;
  readonly text: string;
  /** The jobs (`manifest/id`) it is about, when it is about some. */
  readonly jobs?: readonly string[];
}

/** A job as the steps name it: `manifest/id`. */
export const keyOf = (row: JobRow): string => `${row.manifest}/${row.video_id}`;

/**
 * Why a job failed, as far as the next step goes: `local`, before anything was sent (tried again by
 * itself); `sandbox`, on purpose by the sandbox's --fail-rate; `refused`, the service refused the
 * request as sent (the same request gets the same answer); `asset`, on an asset the manifest names
 * by id (`{asset: N}`), which the service says it lacks or cannot use (every attempt sends the same
 * id: reel uploads again only the assets it made, engine/lost-assets.ts); `exhausted`, on the
 * service, with every attempt allowed used; `retry`, on the service, with attempts left.
 */
export type FailureKind = "local" | "sandbox" | "refused" | "asset" | "exhausted" | "retry";

export function failureKind(row: JobRow, maxAttempts: number): FailureKind | undefined {
  if (row.state !== "Fail" && row.state !== "Canceled") return undefined;
  if (row.fail_kind === "local") return "local";
  if (row.error?.includes(INJECTED_FAILURE_REASON)) return "sandbox";
  if (namedAssetsFailed(row).length > 0) return "asset";
  if (row.fail_kind === "rejected") return "refused";
  return row.attempts >= maxAttempts ? "exhausted" : "retry";
}

/**
 * The assets the job's manifest names by id (`{asset: N}`, as its source or a chunk's audio) that
 * its failure's reason names ("asset 123 not found"), as `{asset: N}`.
 */
function namedAssetsFailed(row: JobRow): string[] {
  const named = new Set([...(row.error ?? "").matchAll(/asset (\d+)/gi)].map((m) => m[1]!));
  if (named.size === 0) return [];
  const spec = JSON.parse(row.spec_json) as {
    source?: { kind: string; id?: string };
    chunks?: { audio?: { kind: string; id?: string } }[];
  };
  const given = [spec.source, ...(spec.chunks ?? []).map((chunk) => chunk.audio)].flatMap((ref) =>
    ref?.kind === "asset" && ref.id !== undefined && named.has(ref.id) ? [`{asset: ${ref.id}}`] : [],
  );
  return [...new Set(given)];
}

/**
 * The steps for the failed jobs of `rows`: one per kind of failure, with the jobs it is about.
 * `again`: how the user goes on, "rerun" after a run, "start the watch again" after a watch.
 */
export function failureSteps(rows: readonly JobRow[], maxAttempts: number, again = "rerun"): NextStep[] {
  const byKind = new Map<FailureKind, JobRow[]>();
  for (const row of rows) {
    const kind = failureKind(row, maxAttempts);
    if (kind === undefined) continue;
    // Pushed, not copied: a folder of 100,000 jobs may hold thousands of failures.
    const list = byKind.get(kind);
    if (list) list.push(row);
    else byKind.set(kind, [row]);
  }
  const steps: NextStep[] = [];
  const step = (kind: FailureKind, code: NextStepCode, text: (n: number, them: string) => string): void => {
    const jobs = byKind.get(kind);
    if (!jobs) return;
    steps.push({ code, text: text(jobs.length, agree(jobs.length, "it", "them")), jobs: jobs.map(keyOf) });
  };
  const used = `${maxAttempts} of ${maxAttempts} used`;
  step(
    "retry",
    "FIX_OR_RETRY_FAILED",
    (n, them) =>
      `${plural(n, "job")} failed with attempts left (${plural(maxAttempts, "attempt")} allowed per job): ${again} with --retry-failed to try ${them} again (a new, paid attempt), or edit ${them} in the manifest (a changed video is a new job).`,
  );
  step(
    "exhausted",
    "EDIT_FAILED",
    (n, them) =>
      `${plural(n, "job")} failed on every attempt allowed (${used}): running again does not send ${them} again; edit ${them} in the manifest (a changed video is a new job).`,
  );
  step(
    "refused",
    "EDIT_REFUSED",
    (n, them) =>
      `${plural(n, "job")} ${agree(n, "was", "were")} refused by the service as sent (see the error): the same request gets the same answer, so edit ${them} in the manifest.`,
  );
  const assets = [...new Set((byKind.get("asset") ?? []).flatMap(namedAssetsFailed))];
  step(
    "asset",
    "REPLACE_ASSET",
    (n, them) =>
      `${plural(n, "job")} failed on an asset the manifest names by id (${assets.join(", ")}), which the service does not have or cannot use (see the error): a retry sends the same id and fails the same way. Name the file itself in its place (a path or an https URL: reel uploads it), or upload it again and give its new id, then ${again}: a changed video is a new job, and ${them} ${agree(n, "is", "are")} sent then.`,
  );
  step(
    "local",
    "FIX_AND_RERUN",
    (n, them) =>
      `${plural(n, "job")} failed before anything was sent (nothing was paid): fix what the error says, then ${again}; ${them} ${agree(n, "is", "are")} tried again without being asked.`,
  );
  const injected = byKind.get("sandbox") ?? [];
  const spent = injected.filter((row) => row.attempts >= maxAttempts).length;
  step(
    "sandbox",
    "SANDBOX_FAILURE",
    (n, them) =>
      `${plural(n, "job")} failed on purpose: the sandbox's --fail-rate fails tasks, whatever the video, and the same request again under one --seed. Restart the sandbox without --fail-rate (or with another --seed), then ${again} with --retry-failed to make ${them}${spent > 0 ? `, and a --max-attempts above ${maxAttempts} for the ${plural(spent, "job")} that used all ${maxAttempts}` : ""}.`,
  );
  return steps;
}
