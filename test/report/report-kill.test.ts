// A run's end writes results.jsonl and index.html in one pass, the page's data waiting in a spool
// file beside the page until its head is known. A process killed in the middle (kill -9, a power
// cut) must leave the previous files whole, and nothing but temp files that the next run removes.
// A real child process, killed by a real signal, in the middle of its pass, over real files.
import { spawn } from "node:child_process";
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { removeStaleTempFiles } from "../../src/output/atomic-write.js";
import { writeFolderReports } from "../../src/report/folder-reports.js";
import { tempDir } from "../helpers/temp-dir.js";
import { makeRow } from "./rows.js";

/** Rows big enough that the pass has written to both temp files before the kill (pieces of ~1 MB). */
const ROWS = 4_000;
const KILLED_AFTER = 3_000;

it("leaves the previous results.jsonl and index.html whole when killed mid-pass, and only temp files the next run removes", async () => {
  const dir = await tempDir();
  const out = join(dir, "out");
  const options = {
    thisRun: new Set<number>(),
    decisions: new Map(),
    run: () => ({ outcome: "completed" as const }),
  };
  await import("node:fs/promises").then((fs) => fs.mkdir(out));
  await writeFolderReports(out, [makeRow({ manifest: "m", video_id: "before" })], options);
  const page = await readFile(join(out, "index.html"), "utf8");
  const results = await readFile(join(out, "results.jsonl"), "utf8");
  expect(results).toContain('"id":"before"');

  const rows = join(dir, "rows.json");
  await writeFile(
    rows,
    JSON.stringify(
      Array.from({ length: ROWS }, (_, i) =>
        makeRow({
          id: i + 1,
          manifest: "m",
          video_id: `v${i}`,
          state: "Fail",
          error: `${i} ${"no. ".repeat(150)}`,
        }),
      ),
    ),
  );
  // The child writes the reports from dist/ (built by the global setup) and kills itself in the middle.
  const reports = new URL("../../dist/report/folder-reports.js", import.meta.url).href;
  const script = `const { writeFolderReports } = await import(${JSON.stringify(reports)});
    const { readFileSync } = await import("node:fs");
    const rows = JSON.parse(readFileSync(${JSON.stringify(rows)}, "utf8"));
    async function* killedMidway() {
      for (const [i, row] of rows.entries()) {
        if (i === ${KILLED_AFTER}) process.kill(process.pid, "SIGKILL");
        yield row;
      }
    }
    await writeFolderReports(${JSON.stringify(out)}, killedMidway(), {
      thisRun: new Set(), decisions: new Map(), run: () => ({ outcome: "completed" }),
    });`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "inherit" });
  const signal = await new Promise((resolve) => child.on("exit", (_code, sig) => resolve(sig)));
  expect(signal).toBe("SIGKILL");

  expect(await readFile(join(out, "index.html"), "utf8")).toBe(page);
  expect(await readFile(join(out, "results.jsonl"), "utf8")).toBe(results);
  const left = (await readdir(out)).filter((name) => name !== "index.html" && name !== "results.jsonl");
  // results.jsonl's temp file and the page's spool, both written to before the kill.
  expect(left.sort()).toEqual([
    expect.stringMatching(/^\.index\.html\.[0-9a-f]{12}\.part$/),
    expect.stringMatching(/^\.results\.jsonl\.[0-9a-f]{12}\.part$/),
  ]);
  for (const name of left) expect((await stat(join(out, name))).size).toBeGreaterThan(0);
  // What the next run's start does to the output folder (engine/startup.ts).
  expect(await removeStaleTempFiles(out)).toBe(2);
  expect((await readdir(out)).sort()).toEqual(["index.html", "results.jsonl"]);
});
