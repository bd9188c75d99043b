// `npm run bench`: every benchmark script, one after the other, each in its own process so that its
// memory and CPU figures are its own. Figures only: nothing here passes or fails on a number.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const scripts = [
  "manifest-bench.js",
  "engine-bench.js",
  "watch-bench.js",
  "report-bench.js",
  "review-bench.js",
  "fleet-bench.js",
  "poll-bench.js",
  "export-bench.js",
];
let failed = 0;
for (const script of scripts) {
  const path = fileURLToPath(new URL(script, import.meta.url));
  if (!existsSync(path)) continue;
  console.log(`\n## ${script}`);
  const result = spawnSync(process.execPath, [path], { stdio: "inherit" });
  if (result.status !== 0) {
    failed++;
    console.log(`(${script} exited with ${result.status})`);
  }
}
process.exitCode = failed ? 1 : 0;
