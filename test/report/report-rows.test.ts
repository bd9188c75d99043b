// The rows of a run's reports, read from the store a batch at a time on each pass
// (src/report/report-rows.ts): every row listed, in the run's order, in results.jsonl and in the
// page's data, across more rows than one read holds. A real SQLite state file and a real PostgreSQL.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { writeHtmlReport } from "../../src/report/html-report.js";
import { ROWS_PER_READ, storedRows } from "../../src/report/report-rows.js";
import { writeResults } from "../../src/report/results.js";
import { PgStore } from "../../src/state/pg/store.js";
import type { JobStore, RestoredJob } from "../../src/state/job-store.js";
import { StateStore } from "../../src/state/sqlite/store.js";
import { usePostgres } from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp-dir.js";

const database = usePostgres();
const opened: JobStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});

/** More rows than one read takes, and not a multiple of it. */
const N = 2 * ROWS_PER_READ + 500;

const restored = (i: number): RestoredJob => ({
  key: `m/v${i}`,
  manifest: "m",
  videoId: `v${i}`,
  specHash: String(i + 1).padStart(64, "0"),
  specJson: JSON.stringify({ model: "actor-2", chunks: [{ duration: 5, text: `take ${i}` }] }),
  seconds: 5,
  model: "actor-2",
  state: i % 3 === 0 ? "Fail" : "Success",
  failKind: i % 3 === 0 ? "task" : null,
  attempts: 1,
  taskId: String(1_000 + i),
  taskStatus: i % 3 === 0 ? "Fail" : "Success",
  file: null,
  outDir: null,
  fileSize: null,
  fileSha256: null,
  error: i % 3 === 0 ? "refused" : null,
  createdAt: 1,
  submittedAt: 2,
  finishedAt: 3,
  downloadedAt: null,
});

/** `n` rows restored, then listed. */
async function listsEveryRow(store: JobStore, n: number): Promise<void> {
  await store.restoreJobs(Array.from({ length: n }, (_, i) => restored(i)));
  // The run's order (here the reverse of the rows'), and a version the store does not hold.
  const order = Array.from({ length: n }, (_, i) => n - 1 - i);
  const versions = (): { key: string; specHash: string }[] => [
    ...order.map((i) => ({ key: `m/v${i}`, specHash: restored(i).specHash })),
    { key: "m/gone", specHash: "f".repeat(64) },
  ];
  const rows = storedRows(store, versions);
  const out = await tempDir();
  await writeResults(out, rows);
  await writeHtmlReport(out, rows, { run: { outcome: "completed" } });

  const lines = (await readFile(join(out, "results.jsonl"), "utf8")).trim().split("\n");
  expect(lines.map((line) => (JSON.parse(line) as { id: string }).id)).toEqual(order.map((i) => `v${i}`));
  const page = await readFile(join(out, "index.html"), "utf8");
  const data = JSON.parse(
    /<script type="application\/json" id="reel-data">(.*?)<\/script>/s.exec(page)![1]!,
  ) as {
    jobs: string[];
    rows: unknown[][];
  };
  const id = data.jobs.indexOf("id");
  expect(data.rows.map((row) => row[id])).toEqual(order.map((i) => `v${i}`));
  // The counts come from the first pass: every row, a third of them failed.
  expect(page).toContain(`<b>${n}</b><span>jobs</span>`);
  expect(page).toMatch(new RegExp(`data-status="Fail"[^>]*><b>${Math.ceil(n / 3)}</b>`));
}

describe("the reports' rows read from the store a batch at a time", () => {
  it("list every row in the run's order, in results.jsonl and the page (SQLite)", async () => {
    const dir = await tempDir();
    const store = StateStore.open(join(dir, "state.db"), { baseUrl: "https://a.example" });
    opened.push(store);
    await listsEveryRow(store, N);
  });

  it("list every row in the run's order, in results.jsonl and the page (PostgreSQL)", async (context) => {
    const store = await PgStore.open(await database(context), { baseUrl: "https://a.example" });
    opened.push(store);
    // The query itself (the batching is the SQLite test's): fewer rows, PostgreSQL restores slowly.
    await listsEveryRow(store, 300);
  });
});
