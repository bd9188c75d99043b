// `ceiling`: the store alone, as fast as writers can drive it: how many job lifecycles one
// PostgreSQL serves, one writer and eight.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { backendCpu, childrenCpu } from "./cpu.js";
import { newDatabase, othersBetween, transactions } from "./databases.js";
import { BASELINE, ENTRY, sleep } from "./settings.js";

const CEILING_MS = 5_000;
const CEILING_JOBS = 2_500; // per writer: more than one does in CEILING_MS here

/**
 * A writer of the ceiling (a child process): opens a PgStore as a runner does, inserts its jobs,
 * then on "go" runs the store's side of a job's life as fast as it can until the deadline: read the
 * row, claim it (markSubmitting: the account's row locked, the fence, the bound counted), record the
 * answer (markSubmitted), the final status (recordTaskStatus Success) and the download
 * (markDownloaded). Reports its counts, and the time its claims took. `dist`: the build's dist/
 * folder (this one's, or the baseline's).
 */
export async function ceilingWorker([url, baseUrl, index, dist]) {
  const { PgStore } = await import(pathToFileURL(join(dist, "state/pg/store.js")).href);
  const store = await PgStore.open(url, { baseUrl, concurrency: 10_000 });
  const jobs = Array.from({ length: CEILING_JOBS }, (_, i) => ({
    key: `w${index}/v${i}`,
    manifest: `w${index}`,
    videoId: `v${i}`,
    specHash: randomBytes(32).toString("hex"),
    specJson: JSON.stringify({ model: "actor-2", chunks: [{ duration: 5, text: `w${index} v${i}` }] }),
    seconds: 5,
    model: "actor-2",
  }));
  const heads = await store.upsertJobs(jobs);
  process.send({ ready: true });
  const { deadline } = await new Promise((resolve) => process.once("message", resolve));
  const video = { size: 1_000, sha256: "0".repeat(64), stamp: "bench" };
  let lifecycles = 0;
  let full = 0;
  let claimMs = 0;
  for (const head of heads) {
    if (Date.now() >= deadline) break;
    const row = await store.findJobById(head.id);
    const t = performance.now();
    const claim = await store.markSubmitting(head.id);
    claimMs += performance.now() - t;
    if (claim === "full") {
      full++;
      continue;
    }
    await store.markSubmitted(head.id, `t${index}-${head.id}`);
    await store.recordTaskStatus(head.id, "Success", `https://files.bench.invalid/${head.id}.mp4`, undefined);
    await store.markDownloaded(row, `v${head.id}.mp4`, "/out", video);
    lifecycles++;
  }
  await store.close();
  process.send({ lifecycles, full, claimMs, exhausted: lifecycles === heads.length });
}

/** `writers` writer processes (of the build at `dist`) on one fresh database, spread over `accounts` services. */
async function ceilingRound(writers, accounts, dist, tag) {
  const db = await newDatabase();
  const workers = Array.from({ length: writers }, (_, i) => {
    const baseUrl = `http://account-${i % accounts}.bench.invalid`;
    const child = spawn(process.execPath, [ENTRY, "--ceiling-worker", db.url, baseUrl, String(i), dist], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const inbox = [];
    const waiting = [];
    child.on("message", (m) => (waiting.length ? waiting.shift()(m) : inbox.push(m)));
    const next = () => (inbox.length ? Promise.resolve(inbox.shift()) : new Promise((r) => waiting.push(r)));
    const exited = new Promise((resolve) => child.on("close", resolve));
    return { child, next, exited };
  });
  await Promise.all(workers.map((w) => w.next()));
  const xacts0 = await transactions(db);
  const pgCpu = backendCpu(db.name);
  const cpu0 = childrenCpu();
  const started = Date.now();
  for (const w of workers) w.child.send({ deadline: started + CEILING_MS });
  const counts = await Promise.all(workers.map((w) => w.next()));
  const seconds = (Date.now() - started) / 1000;
  const server = pgCpu.stop();
  await Promise.all(workers.map((w) => w.exited));
  const clientCpu = childrenCpu() - cpu0;
  await sleep(600);
  const xacts1 = await transactions(db);
  const xacts = xacts1.mine - xacts0.mine;
  const others = othersBetween(xacts0, xacts1) / seconds;
  const sum = (k) => counts.reduce((a, c) => a + c[k], 0);
  const lifecycles = sum("lifecycles");
  const claims = lifecycles + sum("full");
  const perSecond = lifecycles / seconds;
  const label = `ceiling, ${writers} writer${writers > 1 ? "s" : ""} on ${accounts === 1 ? "one account" : `${accounts} accounts`}${tag}`;
  const notes = [
    sum("full") ? `${sum("full")} claims found the bound full` : "",
    counts.some((c) => c.exhausted) ? "a writer ran out of jobs: raise CEILING_JOBS" : "",
  ].filter(Boolean);
  return [
    [
      `${label}: job lifecycles per second (per day)`,
      `${Math.round(perSecond)} (${((perSecond * 86_400) / 1e6).toFixed(1)} million)${notes.length ? `; ${notes.join("; ")}` : ""}`,
    ],
    [
      `${label}: store calls / transactions per second; mean claim`,
      `${Math.round((lifecycles * 5 + sum("full") * 2) / seconds)} / ${Math.round(xacts / seconds)}; ${(sum("claimMs") / claims).toFixed(1)} ms (other databases ${Math.round(others)} transactions/s)`,
    ],
    [
      `${label}: CPU, PostgreSQL / the writers`,
      `${(server.seconds / seconds).toFixed(2)} / ${(clientCpu / seconds).toFixed(2)} cores; PostgreSQL ${((server.seconds * 1000) / lifecycles).toFixed(2)} ms per lifecycle`,
    ],
  ];
}

/** Each round of this build, with BENCH_FLEET_BASELINE the baseline's just before it: side by side. */
export async function ceiling() {
  const builds = [
    ...(BASELINE ? [{ dist: join(dirname(BASELINE), "../dist"), tag: " (baseline)" }] : []),
    { dist: fileURLToPath(new URL("../../dist", import.meta.url)), tag: "" },
  ];
  const rows = [];
  for (const [writers, accounts] of [
    [1, 1],
    [8, 1],
    [8, 8],
  ])
    for (const { dist, tag } of builds) rows.push(...(await ceilingRound(writers, accounts, dist, tag)));
  return rows;
}
