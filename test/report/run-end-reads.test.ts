// The end of a run reads its rows from the store a batch at a time, on each pass over them: each pass
// costs a query per batch and the work of every row again (at 100,000 jobs, seconds of CPU). The
// summary's counts, results.jsonl, the page's counts and the page's data share one pass.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { makeClient } from "../../src/client/index.js";
import { runBatch } from "../../src/drivers/run-batch.js";
import { loadManifests } from "../../src/manifest/index.js";
import { StateStore } from "../../src/state/sqlite/store.js";
import { writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();

it("reads the run's rows from the store once at its end, and reports them whole", async () => {
  const s = await sandbox({ timeScale: 0, preProcessingMs: 0 });
  const dir = await tempDir();
  await writeTree(dir, {
    "m.yaml":
      "version: 1\nname: m\ndefaults: { model: actor-2 }\nvideos:\n" +
      '  - { id: a, chunks: [{ duration: 5, text: "one" }] }\n' +
      '  - { id: b, chunks: [{ duration: 10, text: "two" }] }\n' +
      '  - { id: c, chunks: [{ duration: 5, text: "three" }] }\n',
  });
  const store = StateStore.open(join(dir, "state.db"), { baseUrl: s.baseUrl });
  const client = makeClient({ baseUrl: s.baseUrl, apiKey: s.apiKey });
  // The real store, its batch reads counted (only the end of a run reads rows by version).
  let reads = 0;
  const jobsOfVersions = store.jobsOfVersions.bind(store);
  store.jobsOfVersions = (versions) => {
    reads++;
    return jobsOfVersions(versions);
  };
  let summary;
  try {
    const loaded = await loadManifests(["m.yaml"], { cwd: dir });
    expect(loaded.problems).toEqual([]);
    summary = await runBatch({
      jobs: loaded.manifests[0]!.jobs,
      client,
      store,
      outDir: join(dir, "out"),
      cacheDir: join(dir, "cache"),
      httpOrigins: [new URL(s.baseUrl).origin],
      cwd: dir,
    });
  } finally {
    await client.close();
    await store.close();
  }
  expect(reads).toBe(1);
  expect(summary.outcome).toBe("completed");
  expect(summary.counts).toEqual({ Success: 3 });
  expect(summary.videos).toEqual(new Map([["m", 3]]));
  const results = (await readFile(join(dir, "out", "results.jsonl"), "utf8")).trim().split("\n");
  expect(results.map((line) => JSON.parse(line) as { id: string; thisRun: boolean })).toEqual([
    expect.objectContaining({ id: "a", status: "Success", thisRun: true }),
    expect.objectContaining({ id: "b", status: "Success", thisRun: true }),
    expect.objectContaining({ id: "c", status: "Success", thisRun: true }),
  ]);
  const page = await readFile(join(dir, "out", "index.html"), "utf8");
  expect(page).toContain("Completed: every job succeeded");
  expect(page).toMatch(/<b>3<\/b><span>jobs<\/span>/);
});
