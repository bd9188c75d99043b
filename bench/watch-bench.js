// Watch mode figures: the delay from a manifest landing to its first submission, and the
// watcher's CPU use while idle. Prints figures; asserts nothing.
//   node bench/watch-bench.js   (after `npm run build`)
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startSandbox } from "../dist/sandbox/index.js";

const BIN = fileURLToPath(new URL("../bin/reel.js", import.meta.url));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** CPU seconds (user + system) a process has used, from /proc. */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (100 Hz)
}

const sandbox = await startSandbox({ slots: 8, timeScale: 0.001, preProcessingMs: 1 });
const dir = mkdtempSync(join(tmpdir(), "reel-watch-bench-"));
mkdirSync(join(dir, "incoming"));
const child = spawn(process.execPath, [BIN, "watch", "incoming"], {
  cwd: dir,
  env: { ...process.env, REEL_BASE_URL: sandbox.baseUrl, REEL_API_KEY: sandbox.apiKey },
  stdio: ["ignore", "ignore", "pipe"],
});
let stderr = "";
child.stderr.on("data", (d) => {
  stderr = (stderr + d).slice(-2000);
});
while (!stderr.includes("watching")) await sleep(20);

const delays = [];
for (let i = 0; i < 20; i++) {
  const created = sandbox.counters.generationsCreated;
  const landed = Date.now();
  writeFileSync(
    join(dir, "incoming", `m${i}.yaml`),
    `version: 1\nname: m${i}\nvideos:\n  - id: v\n    model: actor-2\n    resolution: 720p\n    chunks:\n      - duration: 5\n        text: "take ${i}"\n`,
  );
  while (sandbox.counters.generationsCreated === created) await sleep(2);
  delays.push(Date.now() - landed);
  await sleep(300);
}
delays.sort((a, b) => a - b);

await sleep(3_000); // let the last downloads and the debounced result writes finish
const before = cpuSeconds(child.pid);
await sleep(10_000);
const idle = cpuSeconds(child.pid) - before;

child.kill("SIGINT");
await new Promise((r) => child.on("exit", r));
await sandbox.close();
rmSync(dir, { recursive: true, force: true });

const rows = [
  [
    "watch: manifest lands -> first submission, median of 20",
    `${delays[10]} ms (min ${delays[0]}, max ${delays[19]})`,
  ],
  [
    "watch: CPU while idle, 10 s",
    `${(idle * 1000).toFixed(0)} ms (${((idle / 10) * 100).toFixed(2)}% of a core)`,
  ],
];
const width = Math.max(...rows.map((r) => r[0].length));
for (const [name, value] of rows) console.log(`${name.padEnd(width)}  ${value}`);
