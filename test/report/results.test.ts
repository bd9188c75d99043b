// OUT/results.jsonl, written in pieces for big folders: each line is the job's record (resultOf) with
// `thisRun` last, byte for byte, across the pieces' seams.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resultOf } from "../../src/output/job-record.js";
import { writeResults } from "../../src/report/results.js";
import { type DecisionRow, versionKey } from "../../src/state/job-store.js";
import { tempDir } from "../helpers/temp-dir.js";
import { manyRows } from "./rows.js";

describe("results.jsonl", () => {
  it("holds one line per row, the record then thisRun, over several megabytes", async () => {
    const out = await tempDir();
    // Distinct versions, a few decided, every third row this run's: ~2.5 MB, several pieces.
    const rows = manyRows(5_000, "v.mp4").map((row, i) => ({
      ...row,
      id: i + 1,
      spec_hash: String(i).padStart(64, "0"),
      error: i === 7 ? `quote " backslash \\ line\nbreak \u2028 <tag>` : row.error,
      // Text beyond Latin-1, a lone surrogate (written as JSON.stringify writes it), a fractional length.
      ...(i === 8 ? { manifest: "printemps-été-🌸", error: "half \ud800 a pair", seconds: 2.5 } : {}),
    }));
    const decisions = new Map<string, DecisionRow>(
      rows
        .filter((_, i) => i % 11 === 0)
        .map((row, n) => [
          versionKey(row.job_key, row.spec_hash),
          {
            id: n + 1,
            baseUrl: "x",
            key: row.job_key,
            specHash: row.spec_hash,
            decision: n === 4 ? "cleared" : n % 2 ? "approved" : "rejected",
            reviewer: "ana",
            note: n % 3 ? null : "too dark",
            decidedAt: Date.UTC(2025, 4, 2) + n,
          },
        ]),
    );
    const thisRun = new Set(rows.filter((_, i) => i % 3 === 0).map((row) => row.id));
    await writeResults(out, rows, thisRun, decisions);
    const expected = rows
      .map(
        (row) =>
          `${JSON.stringify({
            ...resultOf(row, decisions.get(versionKey(row.job_key, row.spec_hash))),
            thisRun: thisRun.has(row.id),
          })}\n`,
      )
      .join("");
    const text = await readFile(join(out, "results.jsonl"), "utf8");
    expect(text.length).toBeGreaterThan(2_000_000);
    expect(text).toBe(expected);
  });

  it("is empty for a folder with no jobs", async () => {
    const out = await tempDir();
    await writeResults(out, []);
    expect(await readFile(join(out, "results.jsonl"), "utf8")).toBe("");
  });
});
