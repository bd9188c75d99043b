// A failed upload keeps its intent only when the service may have stored the file (the next run then
// says so, and uploads it again): what a failed call means is classify's judgement (client/classify.ts).
// A 503 is "not now", nothing stored; a 500 after the upload was taken may have stored it.
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import PQueue from "p-queue";
import { expect, it } from "vitest";
import { makeClient } from "../../src/client/index.js";
import { makeAssetResolver } from "../../src/engine/assets.js";
import { stampOf } from "../../src/manifest/validate/media-file.js";
import { StateStore } from "../../src/state/sqlite/store.js";
import { REPO } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const IMAGE = join(REPO, "manifests", "media", "face.png");

/** Uploads the image to a service that fails every upload with `fault`; returns the lost uploads the next run finds. */
async function lostUploadsAfter(fault: "rate503" | "rate500AfterEffect"): Promise<number> {
  const s = await sandbox({ faults: { [fault]: 1, retryAfterSeconds: 0, routes: ["POST /v1/assets"] } });
  const dir = await tempDir();
  const bytes = await readFile(IMAGE);
  const store = StateStore.open(join(dir, "state.db"), { baseUrl: s.baseUrl });
  const client = makeClient({ baseUrl: s.baseUrl, apiKey: s.apiKey, retry: { maxAttempts: 1 } });
  const controller = new AbortController();
  try {
    const resolver = makeAssetResolver({
      client,
      store,
      queue: new PQueue({ concurrency: 1 }),
      cacheDir: join(dir, "cache"),
      resubmitUncertain: false,
      signal: controller.signal,
      costedSignal: controller.signal,
    });
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    const info = await stat(IMAGE, { bigint: true });
    const ref = {
      kind: "file",
      path: IMAGE,
      sha256,
      size: bytes.length,
      format: "png",
      stamp: stampOf(info),
    } as const;
    await expect(resolver.resolve(ref)).rejects.toThrow();
    expect(s.counters.requestCount("POST", "/v1/assets")).toBe(1);
    return await store.takeInterruptedUploads();
  } finally {
    await client.close();
    await store.close();
  }
}

it("an upload answered 503 (not now) stored nothing: the next run has no lost upload to tell of", async () => {
  expect(await lostUploadsAfter("rate503")).toBe(0);
});

it("an upload answered 500 may have been stored: its intent stays, and the next run tells of it", async () => {
  expect(await lostUploadsAfter("rate500AfterEffect")).toBe(1);
});
