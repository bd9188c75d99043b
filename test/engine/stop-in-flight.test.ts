// Stopping a run with work in flight. When a fatal refusal (a rejected key) stops a run while another
// submission is still on the wire, that submission may have been accepted: it must end `uncertain`,
// never `pending` (which a rerun would submit again, paying twice). And a stop is prompt even while
// every task waits for its next poll, which against a real service can be 30 s away.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { makeClient } from "../../src/client/index.js";
import { runBatch } from "../../src/drivers/run-batch.js";
import { loadManifests } from "../../src/manifest/index.js";
import { StateStore } from "../../src/state/sqlite/store.js";
import { writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";
import { summaryRows } from "../helpers/summary-rows.js";

const sandbox = useSandboxes();

async function loadTwo(dir: string) {
  const videos = ["a", "b"].map(
    (id) => `  - id: ${id}\n    chunks:\n      - duration: 5\n        text: "${id}"\n`,
  );
  await writeTree(dir, {
    "m.yaml": `version: 1\nname: m\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${videos.join("")}`,
  });
  const { manifests } = await loadManifests(["m.yaml"], { cwd: dir });
  return manifests[0]!.jobs;
}

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r) ?? r(undefined));
});

it("leaves a submission cut off by the stop uncertain, and the refused one pending", async () => {
  let posts = 0;
  // The first submission hangs (the service is slow to answer); the second is refused: the key was
  // revoked meanwhile. (No credits would not cut the first off: reel waits for what may be paid.)
  server = createServer((req, res) => {
    req.resume();
    if (req.method === "POST" && req.url === "/v1/generations") {
      posts++;
      if (posts === 1) return; // never answers
      setTimeout(() => {
        res.writeHead(401, { "content-type": "application/json" });
        res.end(JSON.stringify({ detail: "Invalid API key" }));
      }, 100);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const dir = await tempDir();
  const jobs = await loadTwo(dir);
  const store = StateStore.open(join(dir, "state.db"), { baseUrl });
  const client = makeClient({ baseUrl, apiKey: "k" });
  const summary = await runBatch({
    jobs,
    client,
    store,
    outDir: join(dir, "out"),
    cacheDir: join(dir, "cache"),
    concurrency: 2,
  });
  await client.close();
  expect(summary.outcome).toBe("fatal");
  expect(summary.fatal?.code).toBe("E_AUTH");
  const rows = await summaryRows(summary);
  const states = Object.fromEntries(rows.map((row) => [row.video_id, row]));
  // Which of a and b went first is up to the queue: one hung (uncertain), one was refused (pending).
  const hung = Object.values(states).find((row) => row.state === "uncertain");
  const refused = Object.values(states).find((row) => row.state === "pending");
  expect(hung, JSON.stringify(rows.map((r) => [r.video_id, r.state]))).toBeDefined();
  expect(refused).toBeDefined();
  // A refusal spends nothing: no attempt is counted for it.
  expect(refused!.attempts).toBe(0);
  expect(hung!.attempts).toBe(1);
  await store.close();
});

it("stops at once while every task sleeps until its next poll, and keeps the task ids", async () => {
  const s = await sandbox({ timeScale: 1 }); // each task runs 5 s: long after the stop
  const dir = await tempDir();
  const jobs = await loadTwo(dir);
  const store = StateStore.open(join(dir, "state.db"), { baseUrl: s.baseUrl });
  const client = makeClient({ baseUrl: s.baseUrl, apiKey: s.apiKey });
  const interrupt = new AbortController();
  let submitted = 0;
  let stoppedAt = 0;
  const summary = await runBatch({
    jobs,
    client,
    store,
    outDir: join(dir, "out"),
    cacheDir: join(dir, "cache"),
    concurrency: 2,
    // A real service's schedule: 30 s between polls.
    pollTiming: { minMs: 30_000, maxMs: 30_000 },
    signal: interrupt.signal,
    onJobChange: () => {
      if (++submitted < 2) return;
      // Both tasks are now waiting for their first poll.
      setTimeout(() => {
        stoppedAt = Date.now();
        interrupt.abort();
      }, 100);
    },
  });
  const tookMs = Date.now() - stoppedAt;
  const rows = await summaryRows(summary);
  await client.close();
  await store.close();
  expect(summary.outcome).toBe("interrupted");
  expect(tookMs).toBeLessThan(1_000);
  // Followed by the next run, never submitted again.
  expect(rows.map((row) => [row.state, row.task_id !== null])).toEqual([
    ["submitted", true],
    ["submitted", true],
  ]);
  expect(s.counters.generationsCreated).toBe(2);
});

it("does not end with a paid speech call in flight when another asset of its job failed", async () => {
  // Speech takes 800 ms; the job's image is gone by the time it is uploaded, which fails at once.
  const s = await sandbox({ faults: { latencyMs: 800, routes: ["POST /v1/audios"] } });
  const dir = await tempDir();
  await writeTree(dir, {
    "m.yaml": `version: 1\nname: m\nvideos:\n  - id: a\n    model: avatar-h1\n    resolution: 540p\n    source: ./face.png\n    chunks:\n      - duration: 3\n        speech: { voice: 17, text: "Hello." }\n`,
    "face.png": { fixture: "tiny.png" },
  });
  const { manifests } = await loadManifests(["m.yaml"], { cwd: dir });
  await rm(join(dir, "face.png"));
  const store = StateStore.open(join(dir, "state.db"), { baseUrl: s.baseUrl });
  const client = makeClient({ baseUrl: s.baseUrl, apiKey: s.apiKey });
  const summary = await runBatch({
    jobs: manifests[0]!.jobs,
    client,
    store,
    outDir: join(dir, "out"),
    cacheDir: join(dir, "cache"),
  });
  // The speech's answer is recorded before the run ends: no "may have been created" at the next start.
  const speech = (await store.findSpeech("17", "Hello."))?.state;
  await client.close();
  expect(speech).toBe("done");
  expect((await summaryRows(summary))[0]).toMatchObject({ state: "Fail", fail_kind: "local" });
  await store.close();
});
