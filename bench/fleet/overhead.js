// `overhead`: one runner, many instant jobs, on SQLite and on PostgreSQL: its CPU per job on each.
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSandbox } from "../../dist/sandbox/index.js";
import { adminQuery, storeFor } from "./databases.js";
import { fmtS, perJob } from "./figures.js";
import { manifestOf, round, videosIn } from "./runners.js";
import { BASELINE, BIN } from "./settings.js";

/** Bytes of the store: the database's tables with their indexes, or the state file with its WAL. */
async function storeBytes(db, dir) {
  if (db) {
    const { rows } = await adminQuery(
      "SELECT sum(pg_total_relation_size(oid)) AS n FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace",
      [],
      db.url,
    );
    return Number(rows[0].n);
  }
  const file = join(dir, "state.db");
  return [file, `${file}-wal`].reduce((a, f) => a + (existsSync(f) ? statSync(f).size : 0), 0);
}

/**
 * One runner, `n` instant tasks, 64 at a time: its CPU per job on each store, PostgreSQL's own CPU
 * beside. 2,000 jobs by default: a runner on PostgreSQL does about 60 jobs a second here (each
 * statement waits its turn on the runner's one connection), so 10,000 would take three minutes.
 * With BENCH_FLEET_BASELINE, its PostgreSQL round too, just before this build's, marked "(baseline)".
 */
export async function overhead(pgOk) {
  const n = Number(process.env.BENCH_FLEET_JOBS ?? 2_000);
  const rounds = Number(process.env.BENCH_FLEET_ROUNDS ?? 1);
  // Alternated, so that whatever else loads the machine weighs on both alike.
  const pgRounds = [
    ...(BASELINE ? [{ usePg: true, bin: BASELINE, tag: " (baseline)" }] : []),
    { usePg: true, bin: BIN, tag: "" },
  ];
  const plan = Array.from({ length: rounds }, () => [
    { usePg: false, bin: BIN, tag: "" },
    ...(pgOk ? pgRounds : []),
  ]).flat();
  const rows = [];
  const figures = { sqlite: [], pg: [] };
  for (const { usePg, bin, tag } of plan) {
    const sandbox = await startSandbox({ slots: 1_000, timeScale: 0, preProcessingMs: 0 });
    const dir = mkdtempSync(join(tmpdir(), "reel-fleet-bench-"));
    // The videos on tmpfs where there is one (the disk's cost of new files is no part of the store's);
    // the state file on the disk, like the database.
    const outBase = existsSync("/dev/shm") ? mkdtempSync(join("/dev/shm", "reel-fleet-bench-")) : dir;
    try {
      writeFileSync(
        join(dir, "big.yaml"),
        manifestOf("big", n, () => [5]),
      );
      const db = usePg ? await storeFor(bin) : undefined;
      const out = join(outBase, "out");
      const r = await round({
        db,
        runners: 1,
        split: true,
        manifests: ["big"],
        sandbox,
        dir,
        concurrency: 64,
        out,
        bin,
      });
      if (!tag) (usePg ? figures.pg : figures.sqlite).push(r.runnerCpu);
      const name = `${usePg ? "PostgreSQL" : "SQLite"}${tag}`;
      rows.push(
        [
          `overhead ${name}: ${videosIn(out)}/${n} jobs in ${fmtS(r.wallMs)}; CPU per job, runner${usePg ? " + PostgreSQL" : ""}`,
          `${perJob(r.runnerCpu, n)} (user ${perJob(r.runnerUser, n)}, system ${perJob(r.runnerSystem, n)})${r.server ? ` + ${perJob(r.server.seconds, n)} (${(r.xacts / n).toFixed(1)} transactions per job; other databases ${Math.round(r.othersPerSecond)}/s)` : ""}`,
        ],
        [
          `overhead ${name}: the store's size per job`,
          `${Math.round((await storeBytes(db, dir)) / n)} bytes`,
        ],
      );
    } finally {
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
      if (outBase !== dir) rmSync(outBase, { recursive: true, force: true });
    }
  }
  if (figures.pg.length > 0) {
    const best = (list) => Math.min(...list);
    rows.push([
      `overhead: runner CPU, PostgreSQL / SQLite${rounds > 1 ? " (best of each)" : ""}`,
      `${(best(figures.pg) / best(figures.sqlite)).toFixed(2)}x`,
    ]);
  }
  return rows;
}
