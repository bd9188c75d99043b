// The engine's lanes of work (context.ts EngineQueues): each job is worked on once at a time, in the
// lane its state calls for. Jobs wait in a lane's backlog, a small entry each, until the lane has
// room (admit), so that 100,000 wanted jobs are not 100,000 queued closures; a job another runner
// of the fleet holds waits outside the lane until it lets go, then runs again. A job's failure is
// sorted here: the store refusing a write, or the output disk full, stops all work.
import type PQueue from "p-queue";
import { OutputDiskError } from "../errors/output.js";
import { StateFileError } from "../errors/state.js";
import { Backlog } from "./backlog.js";
import { type EngineContext, IN_FLIGHT } from "./context.js";

/** A job's work found it held by another runner of the fleet: it waits, then runs again. */
export const ELSEWHERE = Symbol("elsewhere");
export type Worked = void | typeof ELSEWHERE;

export interface Lanes {
  /**
   * Works on job `rowId` in `lane`: once per job at a time. It waits in the lane's backlog until the
   * lane has room (see admit); call admit once the jobs of a batch are tracked.
   */
  track(rowId: number, work: () => Promise<Worked>, lane: PQueue, priority?: number): void;
  /**
   * Hands jobs from each backlog to its lane while the lane has fewer queued than it runs at once, so
   * that the lane never idles and holds no more than that; a task already on the service goes in at
   * once (it holds a generation slot, and goes before any other). After a stop, nothing is admitted:
   * the work would be skipped anyway.
   */
  admit(): void;
  /** Resolves once no job is being worked on. */
  whenIdle(): Promise<void>;
}

/** `stopForState`: the store refused a write (see makeEngine); `onDiskFull`: the output disk did. */
export function makeLanes(
  ctx: EngineContext,
  stopForState: (error: StateFileError) => void,
  onDiskFull: (error: OutputDiskError) => void,
): Lanes {
  const stop = ctx.signals.stop;
  const { gate, log } = ctx;
  const working = new Map<number, Promise<void>>(); // row id -> its processing
  const backlogs = new Map<PQueue, Backlog<{ rowId: number; work: () => Promise<Worked> }>>(); // lane -> jobs not in it yet
  const waiting = new Set<number>(); // row ids in a backlog

  function track(rowId: number, work: () => Promise<Worked>, lane: PQueue, priority = 0): void {
    if (working.has(rowId) || waiting.has(rowId)) return;
    let backlog = backlogs.get(lane);
    if (!backlog) backlogs.set(lane, (backlog = new Backlog()));
    backlog.add({ rowId, work }, priority);
    waiting.add(rowId);
  }

  function admit(): void {
    if (stop.signal.aborted) {
      for (const backlog of backlogs.values()) backlog.clear();
      waiting.clear();
      return;
    }
    for (const [lane, backlog] of backlogs) {
      for (let next = backlog.peek(); next; next = backlog.peek()) {
        if (lane.size >= lane.concurrency && next.priority < IN_FLIGHT) break;
        backlog.take();
        waiting.delete(next.item.rowId);
        start(next.item.rowId, next.item.work, lane, next.priority);
      }
    }
  }

  /**
   * Work that finds the job held by another runner of the fleet (ELSEWHERE) waits outside the lane
   * until none holds it, then runs again.
   */
  function start(rowId: number, work: () => Promise<Worked>, lane: PQueue, priority: number): void {
    const attempt = async (): Promise<void> => {
      // Work still queued when the engine stops is skipped (a stop is prompt).
      while (
        (await lane.add(async () => (stop.signal.aborted ? undefined : work()), { priority })) === ELSEWHERE
      ) {
        await ctx.coordinator.untilLetGo(rowId);
        if (stop.signal.aborted) return;
      }
    };
    const promise = attempt()
      .catch((error: unknown) => {
        if (stop.signal.aborted) return;
        if (error instanceof StateFileError) {
          stopForState(error);
          return;
        }
        if (error instanceof OutputDiskError) {
          // Every other video would meet the same disk: stop at once rather than fail them one by
          // one. Tasks keep their ids in the state file; a rerun follows them and downloads.
          onDiskFull(error);
          return;
        }
        if (!gate.handleFatal(error)) log.error({ rowId, err: error }, "unexpected error");
      })
      .finally(() => {
        working.delete(rowId);
        admit();
      });
    working.set(rowId, promise);
  }

  return {
    track,
    admit,
    async whenIdle() {
      admit();
      while (working.size > 0) await Promise.all([...working.values()]);
    },
  };
}
