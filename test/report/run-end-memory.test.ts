// The end of a run writes results.jsonl and index.html from the store. It must read the rows a batch
// at a time, and only the rows it lists: a run that read every row of its service at once needed
// the memory of the whole history of the state file (a long-lived project's), whatever its own size.
// The real CLI in a child process with a small heap, a real sandbox over HTTP, a real state file.
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { StateStore } from "../../src/state/sqlite/store.js";
import { BIN, writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();

/** Earlier videos of another manifest, made for another output folder: about 120 MB of specs in all. */
const EARLIER = 4_000;
const PROMPT = "a presenter walks through the spring collection, ".repeat(600);
/** A heap in which reading every earlier row at once does not fit (the run before: out of memory). */
const HEAP_MB = 48;

it("ends a 2-video run in a 48 MB heap in a state of 4,000 big earlier rows, and lists its own videos", async () => {
  const s = await sandbox({ timeScale: 0, preProcessingMs: 0 });
  const dir = await tempDir();
  const store = StateStore.open(join(dir, "state.db"), { baseUrl: s.baseUrl });
  try {
    await store.restoreJobs(
      Array.from({ length: EARLIER }, (_, i) => ({
        key: `archive/v${i}`,
        manifest: "archive",
        videoId: `v${i}`,
        specHash: String(i + 1).padStart(64, "0"),
        specJson: JSON.stringify({ model: "actor-2", chunks: [{ duration: 5, text: `${i} ${PROMPT}` }] }),
        seconds: 5,
        model: "actor-2",
        state: "Success" as const,
        failKind: null,
        attempts: 1,
        taskId: String(1_000_000_000_000_000 + i),
        taskStatus: "Success",
        file: `archive/v${i}.mp4`,
        outDir: join(dir, "earlier-out"),
        fileSize: null,
        fileSha256: null,
        error: null,
        createdAt: 1,
        submittedAt: 2,
        finishedAt: 3,
        downloadedAt: 4,
      })),
    );
  } finally {
    await store.close();
  }
  await writeTree(dir, {
    "m.yaml":
      "version: 1\nname: today\ndefaults: { model: actor-2 }\nvideos:\n" +
      '  - { id: a, chunks: [{ duration: 5, text: "hi" }] }\n' +
      '  - { id: b, chunks: [{ duration: 5, text: "hello" }] }\n',
  });
  const child = spawn(
    process.execPath,
    [`--max-old-space-size=${HEAP_MB}`, BIN, "run", "m.yaml", "--state", "state.db"],
    { cwd: dir, env: { ...process.env, REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey } },
  );
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  expect(stderr).not.toMatch(/heap out of memory/);
  expect(code, stderr.slice(-2_000)).toBe(0);
  const results = (await readFile(join(dir, "out", "results.jsonl"), "utf8")).trim().split("\n");
  expect(results.map((line) => JSON.parse(line) as { id: string; status: string; thisRun: boolean })).toEqual(
    [
      expect.objectContaining({ id: "a", status: "Success", thisRun: true }),
      expect.objectContaining({ id: "b", status: "Success", thisRun: true }),
    ],
  );
});
