// What `run` and `watch --metrics` serve to Prometheus: reel's own metrics in a registry of their
// own (prom-client's default process metrics are left out: some of them, gauges named *_total, fail
// `promtool check metrics`). Fed from three places only: the engine's progress events (jobs, slots,
// waits), the client's answers and retries, and the store's calls (timed by store-timing.ts, and a
// named budget read at each scrape: what every runner spent from it, which no runner counts alone).
// Jobs by status, slots and queues are read from the live display's own fold of the events
// (display/live-state.ts) when scraped: one rule for where a job is, whoever shows it.
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { ClientOptions } from "../client/index.js";
import type { ProgressEvent, ProgressSink, Stage } from "../engine/progress.js";
import { applyEvent, HOLDING, type JobPlace, type JobView, makeLiveState } from "../display/live-state.js";
import { type PriceTable, videoCredits } from "../prices/index.js";
import type { Model, Resolution } from "../service-contract/api-types.js";
import type { NamedBudget } from "../state/named-budget.js";

/** Who serves the metrics: on every series (`host`, `pid`), and in full on `reel_runner_info`. */
export interface RunnerIdentity {
  readonly command: "run" | "watch";
  readonly host: string;
  readonly pid: number;
  /** The service's base URL, or "sandbox:local". */
  readonly service: string;
  readonly store: "sqlite" | "postgresql";
}

export interface MetricsOptions {
  readonly identity: RunnerIdentity;
  /** The run's bound on generations in flight (--concurrency). */
  readonly concurrency: number;
  /** The price list, when one is found: spend is counted in credits too. */
  readonly prices?: PriceTable | undefined;
  /** @defaultValue Date.now */
  readonly now?: () => number;
}

export interface ReelMetrics {
  readonly registry: Registry;
  /** Teed beside the display: folds the engine's events into the metrics. */
  readonly progress: ProgressSink;
  /** The client's hook (ClientOptions.onAnswer): every attempt's answer by route and status. */
  readonly onAnswer: NonNullable<ClientOptions["onAnswer"]>;
  /** The client's hook (ClientOptions.onRetry): each retry and its reason. */
  readonly onRetry: NonNullable<ClientOptions["onRetry"]>;
  /** Times a store call (see store-timing.ts). */
  readonly observeStoreCall: (call: string) => (seconds: number) => void;
  /** The named budget the work spends from (--budget NAME): `read` gives its row at each scrape. */
  readonly followBudget: (read: () => Promise<NamedBudget | undefined>) => void;
}

/** How metrics name the places of display/live-state.ts (label values are snake_case). */
const STATUS_OF: Record<JobPlace, string> = {
  waiting: "waiting",
  preparing: "preparing",
  queued: "queued",
  submitting: "submitting",
  PreProcessing: "preprocessing",
  Pending: "pending",
  Running: "running",
  downloading: "downloading",
  left: "left",
  done: "done",
  failed: "failed",
  uncertain: "uncertain",
  doneBefore: "done_before",
  doneElsewhere: "done_elsewhere",
  failedBefore: "failed_before",
  uncertainBefore: "uncertain_before",
};

/** Places of a task that is on the service and not final. */
const ON_SERVICE: ReadonlySet<JobPlace> = new Set(["PreProcessing", "Pending", "Running"]);

/** Why a job waits, by its place: for a slot (the concurrency bound), for its uploads and speech, to start. */
const QUEUE_REASON: Partial<Record<JobPlace, string>> = {
  queued: "slot",
  preparing: "assets",
  waiting: "not_started",
};

/** The reasons a pause names (engine/service-gate.ts, fleet/notes.ts), as a label. */
function pauseReasonOf(detail: string | undefined): string {
  if (detail === undefined) return "service";
  if (/credit/i.test(detail)) return "credits";
  if (/api key/i.test(detail)) return "key";
  if (/store/i.test(detail)) return "store";
  return "service";
}

/** Events that say a job moved on: what "no progress" alerts watch. */
const MOVED_ON: ReadonlySet<Stage> = new Set<Stage>([
  "uploaded",
  "speech",
  "submitted",
  "running",
  "done",
  "failed",
]);

const PAUSE_REASONS = ["credits", "key", "store", "service"] as const;

/** Seconds: a task runs seconds to hours; a slot is waited for as long. */
const LONG_BUCKETS = [0.1, 0.5, 1, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200];
/** Seconds: a store call takes well under a millisecond (SQLite) to a few (PostgreSQL). */
const STORE_BUCKETS = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5];

export function makeReelMetrics(options: MetricsOptions): ReelMetrics {
  const now = options.now ?? Date.now;
  const { identity, prices } = options;
  const registry = new Registry();
  registry.setDefaultLabels({ host: identity.host, pid: String(identity.pid) });
  const registers = [registry];
  const state = makeLiveState(options.concurrency, now());
  let paused: string | undefined;

  new Gauge({
    name: "reel_runner_info",
    help: "The runner serving these metrics (always 1): its command, service and store",
    labelNames: ["command", "service", "store"],
    registers,
  }).set({ command: identity.command, service: identity.service, store: identity.store }, 1);
  new Gauge({
    name: "reel_jobs",
    help: "Jobs of the run (a watch: of its manifests) by status",
    labelNames: ["status"],
    registers,
    collect() {
      const counts = new Map<string, number>(Object.values(STATUS_OF).map((s) => [s, 0]));
      for (const view of state.jobs.values()) {
        const status = STATUS_OF[view.place];
        counts.set(status, counts.get(status)! + 1);
      }
      this.reset();
      for (const [status, count] of counts) this.set({ status }, count);
    },
  });
  /** Views of the jobs and of the tasks no manifest lists any more (both hold slots). */
  const everyView = function* (): Generator<JobView> {
    yield* state.jobs.values();
    yield* state.others.values();
  };
  new Gauge({
    name: "reel_generation_slots",
    help: "The bound on generations in flight at once (--concurrency)",
    registers,
  }).set(options.concurrency);
  new Gauge({
    name: "reel_generation_slots_in_use",
    help: "Generation slots held: a submission on its way, or a task followed on the service",
    registers,
    collect() {
      let held = 0;
      for (const view of everyView()) if (HOLDING.has(view.place)) held++;
      this.set(held);
    },
  });
  new Gauge({
    name: "reel_unfinished_generations",
    help: "Tasks on the service this runner follows that have not ended",
    registers,
    collect() {
      let unfinished = 0;
      for (const view of everyView()) if (ON_SERVICE.has(view.place)) unfinished++;
      this.set(unfinished);
    },
  });
  new Gauge({
    name: "reel_queued_jobs",
    help: "Jobs waiting, by reason: slot (a generation slot), assets (their uploads and speech), not_started",
    labelNames: ["reason"],
    registers,
    collect() {
      const counts = new Map<string, number>(Object.values(QUEUE_REASON).map((r) => [r, 0]));
      for (const view of state.jobs.values()) {
        const reason = QUEUE_REASON[view.place];
        if (reason !== undefined) counts.set(reason, counts.get(reason)! + 1);
      }
      for (const [reason, count] of counts) this.set({ reason }, count);
    },
  });
  new Gauge({
    name: "reel_paused",
    help: "1 while the work is paused, by reason: credits (none left), key (rejected), store (not answering), service",
    labelNames: ["reason"],
    registers,
    collect() {
      for (const reason of PAUSE_REASONS) this.set({ reason }, paused === reason ? 1 : 0);
    },
  });
  const lastProgress = new Gauge({
    name: "reel_last_progress_timestamp_seconds",
    help: "When a job last moved on (uploaded, spoken, submitted, running, done, failed): for no-progress alerts",
    registers,
  });
  lastProgress.set(now() / 1000);

  const counter = (name: string, help: string): Counter => new Counter({ name, help, registers });
  const submissions = counter("reel_submissions_total", "Generations submitted (tasks the service accepted)");
  const uploads = counter("reel_uploads_total", "Files uploaded to the service (each once)");
  const speech = counter("reel_speech_total", "Speech made on the service (each voice and text once)");
  const polls = counter("reel_polls_total", "Status requests for tasks (GET /v1/generations/{id})");
  const spentSeconds = counter(
    "reel_spent_seconds_total",
    "Seconds of video submitted (what a --max-seconds cap counts)",
  );
  const spentCredits = prices
    ? counter(
        "reel_spent_credits_total",
        "Credits submitted and spoken, by the price list (what a --max-credits cap counts)",
      )
    : undefined;
  const ended = new Counter({
    name: "reel_jobs_ended_total",
    help: "Jobs that ended in this run or watch: done, failed, uncertain",
    labelNames: ["status"],
    registers,
  });
  const endedChild = {
    done: ended.labels({ status: "done" }),
    failed: ended.labels({ status: "failed" }),
    uncertain: ended.labels({ status: "uncertain" }),
  };
  // Served from 0 on: an alert on their increase sees the first failure.
  for (const child of Object.values(endedChild)) child.inc(0);
  const answers = new Counter({
    name: "reel_service_answers_total",
    help: "Requests to the service by route and status (none: no answer came, network or timeout)",
    labelNames: ["route", "status"],
    registers,
  });
  const retries = new Counter({
    name: "reel_retries_total",
    help: "Requests tried again by the client, by route and reason (the error code of the failed try)",
    labelNames: ["route", "reason"],
    registers,
  });
  const taskSeconds = new Histogram({
    name: "reel_task_duration_seconds",
    help: "A task's time on the service, from its submission to its end as seen",
    buckets: LONG_BUCKETS,
    registers,
  });
  const slotWait = new Histogram({
    name: "reel_slot_wait_seconds",
    help: "A job's wait for a generation slot, before its submission",
    buckets: LONG_BUCKETS,
    registers,
  });
  const storeCalls = new Histogram({
    name: "reel_store_call_duration_seconds",
    help: "The store's calls (SQLite state file or PostgreSQL), by call",
    labelNames: ["call"],
    buckets: STORE_BUCKETS,
    registers,
  });

  let readBudget: (() => Promise<NamedBudget | undefined>) | undefined;
  /** The row read at the last scrape (kept when a read fails: a store outage loses no series). */
  let budgetRow: NamedBudget | undefined;
  const budgetNow = async (): Promise<NamedBudget | undefined> => {
    if (readBudget) budgetRow = (await readBudget().catch(() => undefined)) ?? budgetRow;
    return budgetRow;
  };
  /** A gauge of the named budget by unit (seconds, credits): `value` of each unit it caps. */
  const budgetGauge = (name: string, help: string, value: (row: NamedBudget, unit: Unit) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ["budget", "unit"],
      registers,
      async collect() {
        const row = await budgetNow();
        if (!row) return;
        this.reset();
        if (row.maxSeconds !== null) this.set({ budget: row.name, unit: "seconds" }, value(row, "seconds"));
        if (row.maxCredits !== null) this.set({ budget: row.name, unit: "credits" }, value(row, "credits"));
      },
    });
  type Unit = "seconds" | "credits";
  budgetGauge(
    "reel_budget_spent",
    "What the named budget (reel budget set) spent, by every run and runner naming it: seconds of video, credits",
    (row, unit) => (unit === "seconds" ? row.spentSeconds : row.spentCredits),
  );
  budgetGauge(
    "reel_budget_max",
    "The named budget's caps (reel budget set): seconds of video, credits",
    (row, unit) => (unit === "seconds" ? row.maxSeconds! : row.maxCredits!),
  );

  /** Children by label values, made once: a labelled inc() hashes its labels every time. */
  const answerChildren = new Map<string, Counter.Internal>();
  const pollRoute = "GET /v1/generations/{id}";

  function observe(e: ProgressEvent, at: number): void {
    const key = e.key;
    switch (e.stage) {
      case "submitted": {
        submissions.inc();
        const facts = key === undefined ? undefined : state.jobs.get(key)?.facts;
        if (facts) {
          spentSeconds.inc(facts.seconds);
          const credits =
            prices &&
            videoCredits(
              prices,
              facts.model as Model,
              facts.resolution as Resolution | undefined,
              facts.seconds,
            );
          if (spentCredits && credits) spentCredits.inc(credits);
        }
        break;
      }
      case "uploaded":
        uploads.inc();
        break;
      case "speech":
        speech.inc();
        if (spentCredits && prices?.speech) spentCredits.inc(prices.speech);
        break;
      case "done":
        endedChild.done.inc();
        break;
      case "failed":
        endedChild.failed.inc();
        break;
      case "uncertain":
        endedChild.uncertain.inc();
        break;
      case "submitting": {
        const view = key === undefined ? undefined : state.jobs.get(key);
        if (view?.place === "queued") slotWait.observe((at - view.since) / 1000);
        return;
      }
      case "ended": {
        const view = key === undefined ? undefined : (state.jobs.get(key) ?? state.others.get(key));
        const ms = e.ms ?? (view?.submittedAt === undefined ? undefined : at - view.submittedAt);
        if (ms !== undefined) taskSeconds.observe(ms / 1000);
        return;
      }
      case "paused":
        paused = pauseReasonOf(e.detail);
        return;
      case "resumed":
        paused = undefined;
        return;
      default:
        break;
    }
    if (MOVED_ON.has(e.stage)) lastProgress.set(at / 1000);
  }

  return {
    registry,
    progress: {
      start() {},
      event(e) {
        const at = now();
        observe(e, at);
        applyEvent(state, e, at);
      },
      stop() {},
    },
    onAnswer(endpoint, status) {
      const name = `${endpoint} ${status ?? "none"}`;
      let child = answerChildren.get(name);
      if (!child) {
        child = answers.labels({ route: endpoint, status: status === undefined ? "none" : String(status) });
        answerChildren.set(name, child);
      }
      child.inc();
      if (endpoint === pollRoute) polls.inc();
    },
    onRetry({ error }) {
      retries.inc({ route: error.endpoint, reason: error.code });
    },
    observeStoreCall(call) {
      const child = storeCalls.labels({ call });
      return (seconds) => child.observe(seconds);
    },
    followBudget(read) {
      readBudget = read;
    },
  };
}
