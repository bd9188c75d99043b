// What follows a task's end: its video downloaded into OUT (an expired address asked for again, never
// resubmitted) or its failure recorded, each with its record; and, at a rerun, a video already
// downloaded checked on disk and fetched again if it is gone or not the one reel saved.
import { join } from "node:path";
import { setImmediate as setImmediatePromise } from "node:timers/promises";
import type { Job } from "../manifest/index.js";
import { asDiskFailure } from "../output/atomic-write.js";
import { downloadVideo } from "../output/download.js";
import { DownloadError } from "../errors/output.js";
import { ensureJobRecord, writeJobRecord } from "../output/job-record.js";
import { videoFile } from "../output/layout.js";
import { keepChangedVideo, keepPreviousVersion, keptName, takeBackName } from "../output/versions.js";
import { checkSavedVideo, stampOfPath } from "../output/video-check.js";
import type { JobRow, VideoFacts } from "../state/job-store.js";
import type { EngineContext } from "./context.js";

/** What follows a task's end: its video downloaded, or its failure recorded. `row`: read since. */
export async function afterFinal(ctx: EngineContext, row: JobRow): Promise<void> {
  if (row.state === "Success") {
    await download(ctx, row);
    return;
  }
  if (row.state === "Fail" || row.state === "Canceled") {
    ctx.progress.event({ stage: "failed", key: row.job_key, detail: row.error ?? row.state });
    await ctx.videoLock.run(row.job_key, async () => {
      const superseded = ctx.wanted.isSuperseded(row);
      // As when it succeeds: an earlier version's video at <id>.mp4 moves to its hash name, so that
      // <id>.mp4 and <id>.json always describe the same job.
      if (!superseded) await keepPreviousVersion(ctx.versions, row, videoFile(row.manifest, row.video_id));
      writeJobRecord(ctx.outDir, row, superseded);
    });
  }
}

/** A job found done (Success) when admitted: its video checked on disk, fetched again if need be. */
export async function checkDone(ctx: EngineContext, job: Job, row: JobRow): Promise<void> {
  const { store, outDir } = ctx;
  // The check is synchronous and quick; yielding first lets 10,000 of them at the start of a
  // rerun interleave with the submissions instead of holding them up.
  await setImmediatePromise();
  const inOut = ctx.out.holds(row.out_dir);
  const found = row.file !== null && inOut ? await checkSavedVideo(join(outDir, row.file), row) : undefined;
  if (found?.kind === "same") {
    let current = found.stamp === undefined ? row : await store.recordVideoStamp(row, found.stamp);
    const own = videoFile(row.manifest, row.video_id);
    // An edit undone: this version's video was kept as <id>.<hash>.mp4 while the other one
    // took <id>.mp4. It takes its name back (the other keeps its own hash name); no download.
    if (row.file !== own && ctx.wanted.isWanted(job)) {
      await ctx.queues.downloads.add(async () => {
        await ctx.videoLock.run(row.job_key, () => takeBackName(ctx.versions, current, own));
        ctx.changed();
      });
    } else if (current.error !== null) {
      // The video is whole: an error an earlier run recorded after saving it (its record hit a
      // full disk) is over.
      current = await store.clearJobError(current);
      writeJobRecord(outDir, current, ctx.wanted.isSuperseded(current));
      ctx.changed();
    } else {
      ensureJobRecord(outDir, current);
    }
    return;
  }
  // A rejected take's video removed (reel clean, or by hand) stays removed: it was turned down, so
  // fetching it again would only undo the cleaning. Undeciding it brings it back at the next run.
  if (found?.kind === "missing" && (await isRejected(ctx, row))) return;
  // Not the video reel saved (cut short, edited, replaced): the user's file is kept under another
  // name, never overwritten, and the video is fetched again from its task (never generated again).
  if (found?.kind === "changed") {
    const kept = await ctx.videoLock.run(row.job_key, () => keepChangedVideo(ctx.versions, row));
    ctx.progress.event({
      stage: "note",
      key: row.job_key,
      detail: `${row.file} is not the video reel saved (cut short, edited or replaced): kept as ${kept}; the video is fetched again from task ${row.task_id} (not generated again)`,
    });
  }
  // The user deleted it, or it was fetched into another output folder (one state file can serve
  // several): fetch it again, into this one.
  // Its result address is from an earlier run: it may have expired, or (the sandbox) name a
  // server that is gone. The service is asked for the task again first.
  await download(ctx, row.file === null ? row : await store.forgetDownload(row), { addressFresh: false });
}

async function isRejected(ctx: EngineContext, row: JobRow): Promise<boolean> {
  const [latest] = await ctx.store.latestDecisions([{ key: row.job_key, specHash: row.spec_hash }]);
  return latest?.decision === "rejected";
}

/** `addressFresh`: the row's result URL was polled by this run (else it is asked for again). */
async function download(ctx: EngineContext, finished: JobRow, { addressFresh = true } = {}): Promise<void> {
  await ctx.queues.downloads.add(() =>
    // From the choice of the file (read from the store: which names other versions hold) to the
    // video recorded there, one section per video: see EngineContext.videoLock.
    ctx.videoLock.run(finished.job_key, () => downloadInSlot(ctx, finished, addressFresh)),
  );
}

/** A download in its slot, holding its video's section. */
async function downloadInSlot(ctx: EngineContext, finished: JobRow, addressFresh: boolean): Promise<void> {
  const { store, outDir, gate } = ctx;
  const stop = ctx.signals.stop.signal;
  ctx.progress.event({ stage: "downloading", key: finished.job_key });
  let row = finished;
  // A version of the video that is no longer the wanted one (its spec was edited after it was
  // submitted) keeps its result beside the current one instead of overwriting it.
  const superseded = ctx.wanted.isSuperseded(row);
  const file = superseded ? await keptName(ctx.versions, row) : videoFile(row.manifest, row.video_id);
  if (!superseded) await keepPreviousVersion(ctx.versions, row, file);
  for (;;) {
    if (stop.aborted) return;
    try {
      let url = addressFresh && row.result_url ? row.result_url : await refreshUrl(ctx, row);
      let video: VideoFacts;
      for (let refreshed = 0; ; refreshed++) {
        try {
          const dest = join(outDir, file);
          const saved = await downloadVideo({
            url,
            dest,
            signal: stop,
            httpOrigins: ctx.options.httpOrigins,
            dispatcher: ctx.options.dispatcher,
          });
          video = { ...saved, stamp: stampOfPath(dest) };
          break;
        } catch (error) {
          // An expired address: ask the service for the task again, never resubmit.
          if (!(error instanceof DownloadError) || !error.expired || refreshed >= 2) throw error;
          url = await refreshUrl(ctx, row);
        }
      }
      row = await store.markDownloaded(row, file, ctx.out.key, video);
      writeJobRecord(outDir, row, superseded);
      ctx.changed();
      ctx.progress.event({ stage: "done", key: row.job_key, detail: file });
      return;
    } catch (error) {
      // A full disk is no failure of this video: it stops the engine (see track).
      const disk = asDiskFailure(error, join(outDir, row.manifest));
      if (disk) throw disk;
      if (stop.aborted) return;
      if (gate.handleFatal(error)) {
        if (ctx.options.onFatal === "stop" || !(await gate.whenServiceUsable())) return;
        continue;
      }
      const message = `download failed: ${(error as Error).message}`;
      await store.recordJobError(row.id, message);
      ctx.changed();
      ctx.progress.event({ stage: "failed", key: row.job_key, detail: message });
      return;
    }
  }
}

async function refreshUrl(ctx: EngineContext, row: JobRow): Promise<string> {
  const task = await ctx.client.getGeneration(row.task_id!, { signal: ctx.signals.stop.signal });
  if (!task.resultVideoURL) throw new DownloadError(`task ${row.task_id} has no result address`, "refused");
  await ctx.store.recordResultUrl(row.id, task.resultVideoURL);
  return task.resultVideoURL;
}
