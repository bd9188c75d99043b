// A campaign of many videos waits mostly in the engine's queue: each job waiting there must cost
// little memory, or a run of 100,000 jobs holds hundreds of megabytes before its first download.
// A real engine over HTTP on a sandbox, a real state file; the heap measured after a full GC.
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { expect, it } from "vitest";
import { makeClient } from "../../src/client/index.js";
import { makeEngine } from "../../src/engine/engine.js";
import { loadManifests } from "../../src/manifest/index.js";
import { StateStore } from "../../src/state/sqlite/store.js";
import { writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** The heap in use once the garbage is collected. */
function liveHeap(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** A manifest of `n` videos loaded, a store, and an engine of one slot on a sandbox of one slot. */
async function engineOf(n: number) {
  // Tasks that run for seconds, one at a time: all but a few jobs wait in the queue.
  const s = await sandbox({ timeScale: 1, slots: 1 });
  const dir = await tempDir();
  const videos = Array.from(
    { length: n },
    (_, i) => `  - id: v${i}\n    chunks: [{ duration: 5, text: "take ${i}" }]\n`,
  ).join("");
  await writeTree(dir, {
    "m.yaml": `version: 1\nname: m\ndefaults: { model: actor-2, resolution: 720p }\nvideos:\n${videos}`,
  });
  const { manifests } = await loadManifests(["m.yaml"], { cwd: dir });
  const jobs = manifests[0]!.jobs;
  expect(jobs).toHaveLength(n);

  const store = StateStore.open(join(dir, "state.db"), { baseUrl: s.baseUrl });
  const client = makeClient({ baseUrl: s.baseUrl, apiKey: s.apiKey });
  const stop = new AbortController();
  const engine = await makeEngine({
    client,
    store,
    outDir: join(dir, "out"),
    cacheDir: join(dir, "cache"),
    concurrency: 1,
    signal: stop.signal,
    httpOrigins: [new URL(s.baseUrl).origin],
  });
  return {
    jobs,
    store,
    engine,
    async close() {
      stop.abort();
      await engine.whenIdle();
      await engine.dispose();
      await store.close();
      await client.close();
    },
  };
}

it("holds a job waiting for its turn in well under a kilobyte of heap", async () => {
  const N = 20_000;
  const { jobs, engine, close } = await engineOf(N);
  try {
    const before = liveHeap();
    await engine.setManifestJobs("m", jobs);
    const perJob = (liveHeap() - before) / N;
    // Queued as a task with its chain of promises, a job held over 2 KB.
    expect(perJob).toBeLessThan(1_000);
  } finally {
    await close();
  }
});

it("records a run's jobs in the store with no more than their waiting place's heap at any moment", async () => {
  const N = 20_000;
  const { jobs, store, engine, close } = await engineOf(N);
  // The heap alive each time the store has recorded jobs: the records handed to it and its answer
  // are still held then, besides the jobs already waiting.
  let highest = 0;
  const record = store.upsertJobs.bind(store);
  store.upsertJobs = async (list) => {
    const heads = await record(list);
    highest = Math.max(highest, liveHeap());
    return heads;
  };
  try {
    const before = liveHeap();
    await engine.setManifestJobs("m", jobs);
    const waiting = (liveHeap() - before) / N;
    const atMost = (highest - before) / N;
    expect(waiting).toBeLessThan(1_000);
    // All 20,000 recorded at once: about 770 bytes a job at that moment, twice what a waiting job
    // holds (the heap then sized itself on that moment for the rest of the run).
    expect(atMost - waiting).toBeLessThan(150);
  } finally {
    await close();
  }
});
