// Each job's path through the parts, from the state it is in when admitted to work: a video made is
// checked, a task on the service followed, a job not sent yet submitted (submit.ts), then its end
// delivered (deliver.ts). Before any of a manifest's work, its output folder is prepared once.
import { join } from "node:path";
import type { Job } from "../manifest/index.js";
import { ensureJobRecord } from "../output/job-record.js";
import { ensureRealDir, removeStaleTempFiles } from "../output/atomic-write.js";
import { probeWritable } from "../output/out-dir.js";
import type { JobRow } from "../state/job-store.js";
import type { EngineContext } from "./context.js";
import { afterFinal, checkDone } from "./deliver.js";
import { followInSlot } from "./follow.js";
import { ELSEWHERE, type Worked } from "./lanes.js";
import { forgetLostAssets } from "./lost-assets.js";
import { mayStart } from "./may-start.js";
import { submitAndFollow } from "./submit.js";

export interface JobPaths {
  /** One job's path, from the state it is in when admitted. */
  processJob(job: Job, rowId: number): Promise<Worked>;
  /** Follows a task listed in flight (an earlier run's, or one no live runner follows), then delivers it. */
  followListed(row: JobRow): Promise<void>;
  /**
   * Once per engine and manifest, before any of its work starts: the output folder is made (never
   * through a symlink) and rid of the temp files a killed run left. Later, temp files there belong
   * to downloads of this engine in progress, so it is never cleaned again.
   */
  prepareDir(manifest: string): Promise<void>;
}

/** `staleTempMs`: the age from which a temp file in the output folder is a dead run's (see startup.ts). */
export function makeJobPaths(ctx: EngineContext, staleTempMs: number): JobPaths {
  const { store, progress, outDir, coordinator } = ctx;
  const preparedDirs = new Map<string, Promise<void>>(); // manifest -> its output folder checked and cleaned

  function prepareDir(manifest: string): Promise<void> {
    let prepared = preparedDirs.get(manifest);
    if (!prepared) {
      const dir = join(outDir, manifest);
      prepared = ensureRealDir(dir).then(
        async () => {
          await removeStaleTempFiles(dir, staleTempMs);
          // A folder that exists but refuses writes is found before the manifest's first costed call.
          probeWritable(dir);
          // The output folder's reports list this manifest's videos from now on, whoever runs it.
          await store.recordOutManifest(ctx.out.key, manifest);
        },
        (error: unknown) => {
          preparedDirs.delete(manifest); // checked again next time (watch: the user may fix it)
          throw error;
        },
      );
      preparedDirs.set(manifest, prepared);
    }
    return prepared;
  }

  async function followListed(row: JobRow): Promise<void> {
    // Read again when admitted, as processJob does: listed in flight, the job may have been
    // worked on to its end meanwhile (the list was read while other jobs ran), and its
    // video must not be downloaded twice.
    if ((await store.getJob(row.id)).state !== "submitted") return;
    // In a fleet, only a task no live runner follows (its own left it, or went silent).
    if (!(await coordinator.followTask(row.id))) return;
    await prepareDir(row.manifest);
    await followInSlot(ctx, row.id, row.job_key);
    await afterFinal(ctx, await store.getJob(row.id));
  }

  async function processJob(job: Job, rowId: number): Promise<Worked> {
    // Read when admitted, not when queued: the row may have changed meanwhile (watch mode), or be
    // gone (a video removed from its manifest before it was sent).
    const row = await store.findJobById(rowId);
    if (!row) return;
    // In a fleet: a job another runner submits, follows or downloads is left to it, and worked on
    // again once it lets go (see fleet/elsewhere.ts).
    if (!(await coordinator.takeUp(row, job.key))) return ELSEWHERE;
    if (row.state === "Success") {
      await checkDone(ctx, job, row);
      return;
    }
    if (row.state === "submitted") {
      await followInSlot(ctx, row.id, job.key);
      await afterFinal(ctx, await store.getJob(row.id));
      return;
    }
    if (!(await mayStart(ctx, row, job))) {
      // A failure stays as it is; its record, written without fsync, is made again if it was lost
      // (an uncertain job's too: one found at start has none yet).
      if (row.state === "Fail" || row.state === "Canceled" || row.state === "uncertain") {
        ensureJobRecord(outDir, row);
        progress.event({ stage: "ended-before", key: job.key, detail: row.state });
      }
      return;
    }
    // Not final (stopped, withdrawn, parked, or its failure already said): no longer in flight.
    const dropped = (): void => progress.event({ stage: "dropped", key: job.key });
    let end = await submitAndFollow(ctx, job, row.id);
    if (end === "elsewhere") return ELSEWHERE;
    if (end === "not-final") return dropped();
    let final = await store.getJob(row.id);
    if (await forgetLostAssets(ctx, job, final)) {
      end = await submitAndFollow(ctx, job, row.id);
      if (end === "elsewhere") return ELSEWHERE;
      if (end === "not-final") return dropped();
      final = await store.getJob(row.id);
    }
    await afterFinal(ctx, final);
  }

  return { processJob, followListed, prepareDir };
}
