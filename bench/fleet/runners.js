// The runners of a round: `reel run` processes of one build on one sandbox and one store.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { manifestOf as manifestText } from "../batch-on-sandbox.js";
import { backendCpu, childrenCpuParts, machineCpu, threadCpu } from "./cpu.js";
import { claimCounts, eventReads, othersBetween, runnerRowUpdates, transactions } from "./databases.js";
import { BIN, NAMED, nodeFlags, runnerEnv, sleep } from "./settings.js";

export const manifestOf = (name, count, durationsOf) =>
  manifestText(name, count, durationsOf, (i, c) => `${name} take ${i} part ${c}`);

/**
 * One `reel run` process (of `bin`); resolves with its exit code and the end of its stderr. With
 * `scrape`, its --metrics endpoint is scraped every second, as Prometheus would, until it closes.
 */
export function runReel(cwd, args, env, bin = BIN, scrape = false, onSpawn = () => {}) {
  mkdirSync(cwd, { recursive: true });
  const child = spawn(process.execPath, [...nodeFlags(bin), bin, "run", ...args], {
    cwd,
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  onSpawn(child.pid);
  let stderr = "";
  let scraper;
  child.stderr.on("data", (d) => {
    stderr = (stderr + d).slice(-2_000);
    const url = scrape && !scraper && /metrics at (http:\/\/\S+\/metrics)/.exec(stderr)?.[1];
    if (url)
      scraper = setInterval(
        () =>
          void globalThis.fetch(url).then(
            (r) => r.text(),
            () => {},
          ),
        1_000,
      );
  });
  return new Promise((resolve) =>
    child.on("close", (code, signal) => {
      clearInterval(scraper);
      resolve({ code, signal, stderr });
    }),
  );
}

/** A --notify receiver: answers 200 to every post, and counts them. */
export async function startReceiver() {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received++;
      res.writeHead(200).end("ok");
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    received: () => received,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** `reel budget set bench` (of `bin`) on the round's store, with a cap no round reaches. */
async function setNamedBudget(dir, db, env, bin = BIN) {
  const args = [bin, "budget", "set", "bench", "--max-seconds", "100000000"];
  if (!db) args.push("--state", join(dir, "state.db"));
  const child = spawn(process.execPath, args, { cwd: dir, env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const code = await new Promise((resolve) => child.on("close", resolve));
  if (code !== 0) throw new Error(`reel budget set exited with ${code}: ${stderr}`);
}

/** Videos in an output folder (`<out>/<manifest>/*.mp4`). */
export function videosIn(out) {
  if (!existsSync(out)) return 0;
  let n = 0;
  for (const dir of readdirSync(out, { withFileTypes: true })) {
    if (dir.isDirectory() && !dir.name.startsWith("."))
      n += readdirSync(join(out, dir.name)).filter((f) => f.endsWith(".mp4")).length;
  }
  return n;
}

/**
 * One round: `runners` processes of `reel run` on one sandbox and one store (a fresh PostgreSQL
 * database, or a state file with `db` undefined), all writing into one output folder. `split`: each
 * runner gets its share of the manifests (runner r: m_r, m_{r+R}, ...); otherwise each gets them all.
 */
export async function round({ db, runners, split, manifests, sandbox, dir, concurrency, out, bin, hook }) {
  const names = manifests.map((m) => join(dir, `${m}.yaml`));
  const env = runnerEnv({
    REEL_BASE_URL: sandbox.baseUrl,
    REEL_API_KEY: sandbox.apiKey,
    ...(db ? { REEL_STORE: db.url } : {}),
  });
  if (NAMED) await setNamedBudget(dir, db, env, bin);
  const xacts0 = db ? await transactions(db) : undefined;
  const pgCpu = db && backendCpu(db.name);
  const threads = threadCpu();
  const cpu0 = childrenCpuParts();
  const machine = machineCpu();
  const started = performance.now();
  const spawnedAt = Date.now();
  const results = await Promise.all(
    Array.from({ length: runners }, (_, r) => {
      const mine = split ? names.filter((_, i) => i % runners === r) : names;
      const args = [...mine, "--concurrency", String(concurrency), "--out", out];
      if (!db) args.push("--state", join(dir, "state.db"));
      if (hook) args.push("--events", "events.jsonl", "--notify", hook.url, "--metrics", "0");
      if (NAMED) args.push("--budget", "bench");
      // Each runner in a folder of its own (its logs and hash cache), as on its own machine.
      return runReel(join(dir, `runner${r}`), args, env, bin, hook !== undefined, threads.add);
    }),
  );
  const wallMs = performance.now() - started;
  const exitedAt = Date.now();
  machine.stop();
  const cpu1 = childrenCpuParts();
  const runnerUser = cpu1.user - cpu0.user;
  const runnerSystem = cpu1.system - cpu0.system;
  const runnerCpu = runnerUser + runnerSystem;
  const server = pgCpu?.stop();
  const mainShare = threads.stop();
  for (const [r, result] of results.entries()) {
    if (result.code !== 0)
      console.log(`(runner ${r} exited with ${result.code ?? result.signal}: ${result.stderr.slice(-400)})`);
  }
  // The statistics of the runners' backends are flushed when they end; read a moment later.
  let xacts;
  let othersPerSecond;
  if (db) {
    await sleep(600);
    const xacts1 = await transactions(db);
    xacts = xacts1.mine - xacts0.mine;
    othersPerSecond = (othersBetween(xacts0, xacts1) * 1000) / (performance.now() - started);
  }
  const fences = db ? await runnerRowUpdates(db) : undefined;
  const reads = db ? await eventReads(db) : undefined;
  const claims = db ? await claimCounts(db) : undefined;
  return {
    wallMs,
    spawnedAt,
    exitedAt,
    machine,
    runnerCpu,
    mainShare,
    runnerUser,
    runnerSystem,
    server,
    xacts,
    othersPerSecond,
    fences,
    claims,
    reads,
    codes: results.map((r) => r.code),
  };
}
