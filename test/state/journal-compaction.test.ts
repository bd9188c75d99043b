// When an engine ends, the journal of submissions (OUT/.reel-journal.jsonl) is rewritten without the
// lines of the jobs now final: at 100,000 jobs it is some 60 MB, so it is read and written a piece at
// a time, never held whole. Real files; the heap measured after a full GC while the compaction runs.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { expect, it } from "vitest";
import { compactJournal } from "../../src/output/journal.js";
import { tempDir } from "../helpers/temp-dir.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

function liveHeap(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const scope = { state: "/work/.reel/state.db", service: "https://api.example.test" };
const other = { state: "/elsewhere/state.db", service: "https://api.example.test" };

/** A line as the journal writes it (src/output/journal.ts). */
function line(e: string, st: typeof scope, m: string, v: string, a: number, extra: object = {}): string {
  const h = `${v}-hash`.padEnd(64, "0");
  return JSON.stringify({
    e,
    st: st.state,
    svc: st.service,
    m,
    v,
    h,
    a,
    at: "2026-11-27T10:00:00.000Z",
    ...extra,
  });
}

it("keeps every line of unfinished jobs and of other state files, byte for byte, without holding the file", async () => {
  const dir = await tempDir();
  const lines: string[] = [];
  // 4,000 jobs of this state file (two lines each), the even ones final; and 40,000 lines of another
  // state file that shares the folder, all kept.
  for (let i = 0; i < 4_000; i++) {
    lines.push(line("sent", scope, "m", `v${i}`, 1, { model: "actor-2", s: 5 }));
    lines.push(line("task", scope, "m", `v${i}`, 1, { task: `gen_${i}` }));
  }
  for (let i = 0; i < 40_000; i++)
    lines.push(line("sent", other, "m", `v${i}`, 1, { model: "actor-2", s: 5, pad: "x".repeat(200) }));
  lines.splice(5, 0, '{"e":"sent","st":"cut sh'); // a line cut short by a full disk: dropped
  const text = `${lines.join("\n")}\n`;
  const path = join(dir, ".reel-journal.jsonl");
  writeFileSync(path, text);
  expect(text.length).toBeGreaterThan(10_000_000);

  const before = liveHeap();
  let during = 0;
  let asked = 0;
  await compactJournal(dir, scope, async (manifest, id, specHash, attempt) => {
    if (asked++ === 2_000) during = liveHeap() - before; // midway through the answers
    expect([manifest, specHash.startsWith(`${id}-hash`), attempt]).toEqual(["m", true, 1]);
    return Number(id.slice(1)) % 2 === 0;
  });
  expect(asked).toBe(4_000);
  // Held whole, the file's text and its lines parsed: several times its size.
  expect(during).toBeLessThan(text.length / 10);

  const kept = lines.filter((l, i) => {
    if (i === 5) return false;
    const parsed = JSON.parse(l) as { st: string; v: string };
    return parsed.st !== scope.state || Number(parsed.v.slice(1)) % 2 === 1;
  });
  expect(kept).toHaveLength(4_000 + 40_000);
  expect(readFileSync(path, "utf8")).toBe(`${kept.join("\n")}\n`);
});
