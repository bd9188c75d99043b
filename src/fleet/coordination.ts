// How one runner's engine shares its work with whoever else works on the same store. Chosen once
// from the store (coordinationOf, index.ts): solo on a state file, where the only other runner is
// an earlier one that stopped (its work sorted from the journal), or fleet on a shared PostgreSQL
// store, where live runners claim jobs and slots of the account, hold leases, take over the work
// of those gone silent, and tell each other of freed slots. The engine asks these questions at its
// decision points and branches only on the answers.
import type { Logger } from "../log/logger.js";
import type { FleetView, JobRow, VideoCharge } from "../state/job-store.js";
import type { StateFileError } from "../errors/state.js";

/**
 * What the coordination tells the user (the engine's progress sink: engine/progress.ts), a part of
 * its events: the notes of takeovers and outages, the pause while the store does not answer, a job
 * another runner made, the fleet's counts for the live display.
 */
export interface FleetTelling {
  event(event: FleetEvent): void;
}

export interface FleetEvent {
  readonly stage: "note" | "paused" | "resumed" | "made-elsewhere" | "fleet";
  readonly key?: string;
  readonly detail?: string;
  readonly fleet?: FleetView;
}

/** How this runner holds the output folder (engine/startup.ts openOutput). */
export interface OutputHolding {
  /** Shared with the other runners (its lock taken shared, no journal kept). */
  readonly shared: boolean;
  /** Temp files at least this old are a dead run's, removed (0: every one). */
  readonly staleTempMs: number;
}

/** Why a job waiting for a slot of the account was let go (see slot-line.ts). */
export type SlotTurn = "freed" | "notice" | "timer" | "claimed" | "stop";

/** A runner's jobs waiting for a slot of the account when the bound is full (see slot-line.ts). */
export interface SlotLine {
  /** How many jobs wait: one more joins them without claiming (its claim would find the bound full). */
  readonly size: number;
  /** A claim found the bound full: resolves when this job's turn comes. */
  wait(): Promise<SlotTurn>;
  /** A claim succeeded after `turn` (undefined: it did not wait). */
  claimed(turn?: SlotTurn): void;
  /** A slot of this runner freed (its task ended, or an intent was taken back). */
  freed(): void;
}

/**
 * A claim of a job to submit it (the intent, a compare-and-set): its attempt, or why there is none:
 * - "full": the account's bound of unfinished generations is reached across the fleet (wait in line);
 * - "elsewhere": another runner holds the job (wait until it lets go, then work on it again);
 * - "lost": another process changed the state file's row (said: an oddity);
 * - "forgotten": another watcher of the fleet forgot the job (nothing to say).
 * A row a runner alone finds gone throws JobGoneError (said: a retake withdrawn?).
 */
export type Claim = number | "full" | "elsewhere" | "lost" | "forgotten";

/** What the engine gives the coordination of its run. */
export interface EngineSide {
  /** Aborted when the engine stops. */
  readonly stop: AbortSignal;
  readonly progress: FleetTelling;
  readonly log: Logger;
  /** The store refused this runner's work (taken over, unreachable past its limit): all work stops. */
  stopForState(error: StateFileError): void;
  /** Tasks no live runner follows were found: they are followed here (engine.followInFlight). */
  followUnheld(): Promise<void>;
}

/** How the runners of a store work together, chosen once from the store. */
export interface Coordination {
  readonly output: OutputHolding;
  /**
   * The live display's line of what the whole fleet does: its counts read every few seconds into
   * `sink`. Returns what stops it (solo: nothing to show).
   */
  showFleet(sink: FleetTelling): () => void;
  /** The coordination of one engine's run, from its start to its dispose. */
  attach(engine: EngineSide): Coordinator;
}

/**
 * What the asset resolver asks (engine/assets.ts): whether an intent another writer holds on an
 * upload or a speech call is a live runner's, waited for rather than paid for twice.
 */
export interface IntentCoordination {
  /** The work of runners gone silent meanwhile is sorted (while waiting for another runner's intent). */
  takeOverSilent(): Promise<void>;
  /** Whether `error`, from an upload's or a speech's intent, is another runner's intent winning (waited for). */
  otherRunnerWon(error: unknown): boolean;
  /** Whether a speech call recorded as under way (`creating`) is a live runner's, to wait for. */
  speechUnderWay(row: { readonly state: string }): boolean;
  /**
   * An upload failed: whether its intent is dropped. Kept, it tells the next run that the content
   * may be on the service; but the runners of a fleet wait for an upload while its intent stays.
   */
  dropsUploadIntent(mayHaveStored: boolean): boolean;
}

/** What one engine asks of the coordination while it works. */
export interface Coordinator extends IntentCoordination {
  /**
   * Sorts the work a runner that stopped left, before any job starts: solo, an interrupted run's
   * (checked against the journal of `outDir`); fleet, the runners gone or silent past their lease.
   */
  takeOverStopped(outDir: string): Promise<void>;
  /** The engine's work begins: the coordination's own rounds start (a fleet's takeovers, every heartbeat). */
  start(): void;
  /**
   * Whether this runner works on job `row` (`key`) as it is now: false while another runner submits
   * it, follows its task or downloads its video (wait with untilLetGo, then read it again).
   */
  takeUp(row: JobRow, key: string): Promise<boolean>;
  /** Resolves once no other runner holds job `rowId` (or the engine stops). */
  untilLetGo(rowId: number): Promise<void>;
  /** Makes this runner the follower of job `rowId`'s task: false when another live runner follows it. */
  followTask(rowId: number): Promise<boolean>;
  /** Claims job `rowId` to submit it (see Claim). Throws what the store throws otherwise. */
  claim(rowId: number, charge: VideoCharge | undefined): Promise<Claim>;
  /**
   * This runner's markPending on job `rowId` lost its compare-and-set: whether another runner made
   * it pending meanwhile (the claim then decides which one sends it).
   */
  madePendingElsewhere(rowId: number): Promise<boolean>;
  /**
   * How long to wait before sending on a claimed intent, which is then taken back and claimed again;
   * undefined: send now. A runner of a fleet paused or cut off past its heartbeat may have been
   * taken over meanwhile, and sends nothing until it knows.
   */
  sendDelay(): number | undefined;
  /** The line this runner's jobs stand in for a slot of the account. */
  readonly slots: SlotLine;
  /** Stops what the coordination runs for the engine (its timers, its listeners). */
  dispose(): void;
}
