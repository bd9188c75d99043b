// `scaling`: 400 jobs over 1, 2 and 4 runners on one account's 16 slots (and one runner on SQLite):
// makespan, where its time goes, CPU per job, claims, and the 4-runner / 1-runner ratios.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSandbox } from "../../dist/sandbox/index.js";
import { storeFor, templates } from "./databases.js";
import { fmtS, medianRun, pct, perJob, percentile, refillGaps } from "./figures.js";
import { manifestOf, round, startReceiver, videosIn } from "./runners.js";
import {
  BASELINE,
  BIN,
  ONLY_RUNNERS,
  REPEAT,
  SCALE_JOBS,
  SCALE_MANIFESTS,
  SLOTS,
  TIME_SCALE,
  scaleDurations,
} from "./settings.js";
import { startCost } from "./start.js";

export async function scaling(pgOk, shared) {
  const perManifest = SCALE_JOBS / SCALE_MANIFESTS;
  let totalRunMs = 0;
  let longestMs = 0;
  for (let i = 0; i < perManifest; i++) {
    const ms = scaleDurations(i).reduce((a, b) => a + b, 0) * TIME_SCALE * 1000;
    totalRunMs += ms * SCALE_MANIFESTS;
    longestMs = Math.max(longestMs, ms);
  }
  const idealMs = Math.max(totalRunMs / SLOTS, longestMs);
  const rounds = ONLY_RUNNERS ? [] : [{ label: "SQLite, 1 runner", runners: 1, pg: false, split: true }];
  if (pgOk) {
    for (const n of ONLY_RUNNERS ?? [1, 2, 4])
      rounds.push({ label: `PostgreSQL, ${n} runner${n > 1 ? "s" : ""}`, runners: n, pg: true, split: true });
  }
  // Every runner given every manifest (they race for each job): `node bench/fleet-bench.js shared`.
  if (pgOk && shared)
    rounds.push({ label: "PostgreSQL, 4 runners, all manifests each", runners: 4, pg: true, split: false });
  const rows = [
    [
      "scaling: the work",
      `${SCALE_JOBS} jobs in ${SCALE_MANIFESTS} manifests, tasks of 125-625 ms, ${SLOTS} slots, bound ${SLOTS} (--concurrency ${SLOTS} each); ideal ${fmtS(idealMs)}; ${process.env.BENCH_FLEET_NEW_STORE === "1" ? "each PostgreSQL round on an empty store" : "each PostgreSQL round on a store migrated before it"}`,
    ],
  ];
  const builds = [{ bin: BIN, tag: "" }];
  if (BASELINE) builds.unshift({ bin: BASELINE, tag: " (baseline)" });
  if (process.env.BENCH_FLEET_OBSERVE === "1") {
    if (BASELINE) builds.push({ bin: BASELINE, tag: " (baseline, observed)", observe: true });
    builds.push({ bin: BIN, tag: " (observed)", observe: true });
  }
  // CPU per job of each build: { sqlite, pg: { runners: { runners, pg } } }.
  const perJobCpu = new Map(builds.map((b) => [b.tag, { pg: new Map() }]));
  for (let turn = 1; turn <= REPEAT; turn++) {
    for (const spec of rounds) {
      for (const build of builds) {
        const label = `${spec.label}${build.tag}${REPEAT > 1 ? ` #${turn}` : ""}`;
        const r = await scalingRound(spec, build.bin, idealMs, label, rows, build.observe);
        const cpu = perJobCpu.get(build.tag);
        if (!spec.pg) (cpu.sqlite ??= []).push(r.runnerCpu / SCALE_JOBS);
        else if (spec.split) {
          const runs = cpu.pg.get(spec.runners) ?? [];
          runs.push({ runners: r.runnerCpu, pg: r.server.seconds });
          cpu.pg.set(spec.runners, runs);
        }
      }
    }
  }
  if (pgOk) {
    for (const build of builds) {
      const made = !build.observe && templates.get(build.bin);
      if (made)
        rows.push([
          `scaling: reel budget show on an empty store (migrating it) / on a migrated one${build.tag}`,
          `${fmtS(made.newMs)} / ${fmtS(made.migratedMs)}`,
        ]);
    }
    for (const build of builds) {
      // A runner's fixed cost: start (load, connect, register, checks), heartbeats, stop; with one job.
      const start = await startCost(build.bin);
      const cpu = perJobCpu.get(build.tag);
      rows.push([
        `scaling: a runner's start and stop, PostgreSQL, one job${build.tag}`,
        `${(start.runner * 1000).toFixed(0)} ms CPU + PostgreSQL ${(start.pg * 1000).toFixed(0)} ms; reel --version ${(start.version * 1000).toFixed(0)} ms`,
      ]);
      const one = medianRun(cpu.pg.get(1));
      const four = medianRun(cpu.pg.get(4));
      if (!one || !four) continue;
      const total = (c, n, apart) =>
        (c.runners + c.pg - (apart ? n * (start.runner + start.pg) : 0)) / SCALE_JOBS;
      rows.push([
        `scaling: CPU per job, runners + PostgreSQL, 4 runners / 1 runner${build.tag}`,
        `${(total(four, 4, false) / total(one, 1, false)).toFixed(2)}x (${perJob(total(four, 4, false), 1)} / ${perJob(total(one, 1, false), 1)}); without each runner's start and stop: ${(total(four, 4, true) / total(one, 1, true)).toFixed(2)}x (${perJob(total(four, 4, true), 1)} / ${perJob(total(one, 1, true), 1)})`,
      ]);
      if (cpu.sqlite)
        rows.push([
          `scaling: a runner's CPU per job, PostgreSQL (1 runner) / SQLite${build.tag}`,
          `${(one.runners / SCALE_JOBS / percentile(cpu.sqlite, 0.5)).toFixed(2)}x`,
        ]);
    }
  }
  return rows;
}

/** One scaling round of `spec` with the reel of `bin`; its lines appended to `rows`. */
async function scalingRound(spec, bin, idealMs, label, rows, observe = false) {
  const perManifest = SCALE_JOBS / SCALE_MANIFESTS;
  const sandbox = await startSandbox({ slots: SLOTS, timeScale: TIME_SCALE, preProcessingMs: 0 });
  const dir = mkdtempSync(join(tmpdir(), "reel-fleet-bench-"));
  const hook = observe ? await startReceiver() : undefined;
  try {
    const manifests = Array.from({ length: SCALE_MANIFESTS }, (_, m) => `m${m}`);
    for (const m of manifests)
      writeFileSync(join(dir, `${m}.yaml`), manifestOf(m, perManifest, scaleDurations));
    const db = spec.pg ? await storeFor(bin) : undefined;
    const out = join(dir, "out");
    const r = await round({ ...spec, db, manifests, sandbox, dir, concurrency: SLOTS, out, bin, hook });
    const tasks = [...sandbox.counters.tasks.values()];
    const first = Math.min(...tasks.map((t) => t.createdAt));
    const last = Math.max(...tasks.map((t) => t.finishedAt ?? 0));
    const busy = tasks.reduce((a, t) => a + ((t.finishedAt ?? 0) - (t.startedAt ?? t.finishedAt ?? 0)), 0);
    const c = sandbox.counters;
    const fetchLag = tasks.map((t) => (t.firstDownloadAt ?? Number.NaN) - (t.finishedAt ?? Number.NaN));
    const noticeLag = tasks.map((t) => (t.seenFinalAt ?? Number.NaN) - (t.finishedAt ?? Number.NaN));
    const refill = refillGaps(tasks);
    rows.push(
      [
        `scaling ${label}: makespan (spawn -> all exited) / ideal`,
        `${fmtS(r.wallMs)} = ${(r.wallMs / idealMs).toFixed(2)}x; first submission -> last task done ${fmtS(last - first)}, slots busy ${((100 * busy) / (SLOTS * (last - first))).toFixed(0)}% of it`,
      ],
      [
        // The makespan's two ends, beside the slots' work: the runners' starts and their last records and reports.
        `scaling ${label}: spawn -> first submission; last task done -> all exited (the machine's cores busy)`,
        `${fmtS(first - r.spawnedAt)} (${pct(r.machine.busyBetween(r.spawnedAt, first))}); ${fmtS(r.exitedAt - last)}; first submission -> last task done: ${pct(r.machine.busyBetween(first, last))} busy`,
      ],
      [
        // Each a turn of some runner's event loop, and a request the service answers.
        `scaling ${label}: requests to the service per job (polls of a task)`,
        `${([...c.requests.values()].reduce((a, b) => a + b, 0) / SCALE_JOBS).toFixed(1)} (${(c.requestCount("GET", "/v1/generations/:id") / SCALE_JOBS).toFixed(1)})`,
      ],
      [
        `scaling ${label}: tasks / duplicates / peak unfinished / videos`,
        `${c.generationsCreated} / ${c.duplicateGenerations()} / ${c.peakUnfinished} / ${videosIn(out)}`,
      ],
      [
        // A task done on the service holds its place in the bound until its runner records it.
        `scaling ${label}: task done -> its download starts, median / 90th percentile`,
        `${percentile(fetchLag, 0.5)} / ${percentile(fetchLag, 0.9)} ms`,
      ],
      [
        // Where a slot's idle time goes: the poll's notice, then the download, the record and the next claim.
        `scaling ${label}: task done -> seen by a poll / its slot's next submission, median / 90th`,
        `${percentile(noticeLag, 0.5)} / ${percentile(noticeLag, 0.9)} ms; ${percentile(refill, 0.5)} / ${percentile(refill, 0.9)} ms`,
      ],
      [
        `scaling ${label}: CPU per job, runners${spec.pg ? " + PostgreSQL" : ""}`,
        `${perJob(r.runnerCpu, SCALE_JOBS)}${r.server ? ` + ${perJob(r.server.seconds, SCALE_JOBS)} (${r.server.backends} backends, ${(r.xacts / SCALE_JOBS).toFixed(1)} transactions per job; other databases ${Math.round(r.othersPerSecond)}/s)` : ""}`,
      ],
      [
        // A runner that warms up on fewer jobs spends more of it on the main thread (benchmarks.md).
        `scaling ${label}: runners' CPU per job, user / system; main threads' share`,
        `${perJob(r.runnerUser, SCALE_JOBS)} / ${perJob(r.runnerSystem, SCALE_JOBS)}; ${Math.round(100 * r.mainShare)}%`,
      ],
    );
    if (r.server && process.env.BENCH_FLEET_BACKENDS === "1")
      rows.push([
        `scaling ${label}: PostgreSQL CPU of each backend`,
        r.server.each.map((s) => `${Math.round(s * 1000)}`).join(" ") + " ms",
      ]);
    if (r.fences !== undefined) {
      rows.push([
        `scaling ${label}: claims that found room per job (runner-row updates)`,
        (r.fences / SCALE_JOBS).toFixed(1),
      ]);
      rows.push([
        `scaling ${label}: claim statements per job, at most (of them, not claiming)`,
        r.claims
          ? `${(r.claims.statements / SCALE_JOBS).toFixed(2)} (${(r.claims.full / SCALE_JOBS).toFixed(2)})`
          : "not counted: the database does not track function calls (scripts/postgres-for-tests.sh)",
      ]);
      rows.push([`scaling ${label}: scans of the events table per job`, (r.reads / SCALE_JOBS).toFixed(2)]);
    }
    if (hook) {
      const lines = manifests.reduce((n, _, i) => {
        const file = join(dir, `runner${i}`, "events.jsonl");
        return n + (existsSync(file) ? readFileSync(file, "utf8").split("\n").length - 1 : 0);
      }, 0);
      rows.push([`scaling ${label}: events written / messages received`, `${lines} / ${hook.received()}`]);
    }
    return r;
  } finally {
    await hook?.close();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
