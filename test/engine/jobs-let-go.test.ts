// A run hands the manifest's jobs to the engine and lets go of them: each job's object (its spec,
// hash, key: about 500 bytes) is then held only until its work is done. Held by the run for its
// whole length, 100,000 jobs were some 50 MB of the run's peak memory.
// A real engine over HTTP on a sandbox, a real state file; the heap collected before the count.
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { expect, it } from "vitest";
import { makeClient } from "../../src/client/index.js";
import { runBatch } from "../../src/drivers/run-batch.js";
import type { ProgressSink } from "../../src/engine/progress.js";
import { type Job, loadManifests } from "../../src/manifest/index.js";
import { StateStore } from "../../src/state/sqlite/store.js";
import { writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const N = 40;

it("holds none of the manifest's jobs once they are done, when the run's end writes the reports", async () => {
  const s = await sandbox({ timeScale: 0, preProcessingMs: 0 });
  const dir = await tempDir();
  const videos = Array.from(
    { length: N },
    (_, i) => `  - { id: v${i}, chunks: [{ duration: 5, text: "take ${i}" }] }\n`,
  );
  await writeTree(dir, {
    "m.yaml": `version: 1\nname: m\ndefaults: { model: actor-2 }\nvideos:\n${videos.join("")}`,
  });
  const store = StateStore.open(join(dir, "state.db"), { baseUrl: s.baseUrl });
  const client = makeClient({ baseUrl: s.baseUrl, apiKey: s.apiKey });
  const jobs: WeakRef<Job>[] = [];
  // Counted when the engine is idle: the run's end (the reports) starts then.
  let heldAtEnd: number | undefined;
  const progress = {
    start() {},
    event() {},
    stop() {
      gc();
      heldAtEnd = jobs.filter((job) => job.deref() !== undefined).length;
    },
  } as unknown as ProgressSink;
  try {
    // The jobs are passed on, not kept here (a promise's callback, not this function's frame).
    const summary = await loadManifests(["m.yaml"], { cwd: dir }).then((loaded) => {
      for (const job of loaded.manifests[0]!.jobs) jobs.push(new WeakRef(job));
      return runBatch({
        jobs: loaded.manifests[0]!.jobs,
        client,
        store,
        progress,
        outDir: join(dir, "out"),
        cacheDir: join(dir, "cache"),
        httpOrigins: [new URL(s.baseUrl).origin],
        cwd: dir,
      });
    });
    expect(summary.outcome).toBe("completed");
    expect(summary.counts).toEqual({ Success: N });
  } finally {
    await client.close();
    await store.close();
  }
  expect(jobs).toHaveLength(N);
  expect(heldAtEnd).toBe(0);
});
