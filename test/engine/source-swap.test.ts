// A hostile manifest author swaps a checked image between its check and its upload: for a link to
// a secret file (outside the allowed folder), for a hard link to it, or edits it in place keeping
// its size and times. The run is the one `reel run` makes (load with the state's hash cache, then
// the engine, a real client and the sandbox over HTTP); the swap happens between the two, where a
// slow upload or a watched folder leaves the attacker time. The secret's bytes must never reach the
// service, the job must fail saying why, and the state must not map the image's hash to an asset
// of other content (every later use of the image would send the wrong file).
import { createHash } from "node:crypto";
import { link, readFile, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import PQueue from "p-queue";
import { makeClient } from "../../src/client/index.js";
import { makeAssetResolver } from "../../src/engine/assets.js";
import { runBatch } from "../../src/drivers/run-batch.js";
import { makeCachedHasher } from "../../src/engine/cached-file-hash.js";
import { loadManifests } from "../../src/manifest/index.js";
import { StateStore } from "../../src/state/sqlite/store.js";
import { REPO, writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";
import { summaryRows } from "../helpers/summary-rows.js";

const sandbox = useSandboxes();

const MANIFEST = `version: 1
name: m
videos:
  - id: face
    model: actor-1
    resolution: 720p
    source: ./face.png
    chunks:
      - duration: 5
        text: "a presenter waves"
`;

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** Loads and checks the manifest, lets `swap` act, then runs the engine; returns what it saw. */
async function runWithSwap(swap: (image: string, secret: string) => Promise<void>) {
  const s = await sandbox();
  const dir = await tempDir();
  const outside = await tempDir();
  await writeTree(dir, { "m.yaml": MANIFEST, "face.png": { fixture: "tiny.png" } });
  // The secret is an image too, so the service would accept it: only reel can keep it out.
  const secret = join(outside, "secret.png");
  await writeFile(secret, await readFile(join(REPO, "manifests", "media", "face.png")));
  const image = join(dir, "face.png");
  // Whole seconds, so that an edit can put the times back exactly (an attacker can: utimes).
  await utimes(image, 1_700_000_000, 1_700_000_000);
  const imageSha = sha256(await readFile(image));
  const store = StateStore.open(join(dir, ".reel", "state.db"), { baseUrl: s.baseUrl });
  const client = makeClient({ baseUrl: s.baseUrl, apiKey: s.apiKey });
  try {
    const loaded = await loadManifests(["m.yaml"], { cwd: dir, hashFile: makeCachedHasher(store) });
    expect(loaded.problems).toEqual([]);
    await swap(image, secret);
    const summary = await runBatch({
      jobs: loaded.manifests[0]!.jobs,
      client,
      store,
      outDir: join(dir, "out"),
      cacheDir: join(dir, ".reel", "cache"),
      concurrency: 1,
    });
    return {
      sandbox: s,
      row: (await summaryRows(summary))[0]!,
      assetOfImage: await store.findAsset(imageSha),
      secretSha: sha256(await readFile(secret)),
    };
  } finally {
    await client.close();
    await store.close();
  }
}

it.each([
  [
    "a link to a secret file",
    async (image: string, secret: string) => {
      await rm(image);
      await symlink(secret, image);
    },
    "was replaced by a link",
  ],
  [
    "a hard link to a secret file",
    async (image: string, secret: string) => {
      await rm(image);
      await link(secret, image);
    },
    "was replaced by another file",
  ],
])(
  "uploads nothing of an image swapped for %s after its check, and fails the job saying so",
  async (_what, swap, said) => {
    const seen = await runWithSwap(swap);
    expect(seen.sandbox.counters.uploadsByHash.has(seen.secretSha)).toBe(false);
    expect(seen.sandbox.counters.requestCount("POST", "/v1/assets")).toBe(0);
    expect(seen.sandbox.counters.generationsCreated).toBe(0);
    expect(seen.row.state).toBe("Fail");
    expect(seen.row.error).toContain(`face.png ${said} after reel checked it, so it was not uploaded`);
    expect(seen.row.error).toContain("nothing was sent for this video");
    expect(seen.assetOfImage).toBeUndefined();
  },
);

it("stores nothing on the service, and no asset for the image's hash, when the image is edited in place keeping its size and times", async () => {
  let edited = "";
  const seen = await runWithSwap(async (image) => {
    const bytes = await readFile(image);
    // Same size, same inode; the last byte differs; the times are put back as they were.
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
    await writeFile(image, bytes);
    await utimes(image, 1_700_000_000, 1_700_000_000);
    edited = sha256(bytes);
  });
  expect(seen.sandbox.counters.uploadsByHash.has(edited)).toBe(false);
  expect(seen.sandbox.counters.uploadsByHash.size).toBe(0);
  expect(seen.sandbox.counters.generationsCreated).toBe(0);
  expect(seen.row.state).toBe("Fail");
  expect(seen.row.error).toContain("face.png changed while it was being uploaded");
  expect(seen.assetOfImage).toBeUndefined();
});

it("uploads an image that did not change (the check and the upload agree)", async () => {
  const seen = await runWithSwap(async () => {});
  expect(seen.row.state).toBe("Success");
  expect(seen.sandbox.counters.uploadsByHash.size).toBe(1);
  expect(seen.assetOfImage).toBeDefined();
});

it("uploads a fetched source only as the bytes that were fetched and judged, not a link put in place of its cached copy", async () => {
  const s = await sandbox();
  const dir = await tempDir();
  const outside = await tempDir();
  const image = await readFile(join(REPO, "manifests", "media", "face.png"));
  const url = "https://media.example/face.png";
  // The state says the address was fetched, judged an image, and kept in the cache; its copy has
  // since become a link to a secret of the same size (which the cache's size check lets through).
  const cached = join(dir, "cache", sha256(image));
  const secret = join(outside, "secret.bin");
  await writeFile(secret, Buffer.alloc(image.length, 7));
  await writeTree(dir, { "cache/.keep": "" });
  await symlink(secret, cached);
  const store = StateStore.open(join(dir, "state.db"), { baseUrl: s.baseUrl });
  await store.recordRemote(url, sha256(image), cached, image.length);
  const client = makeClient({ baseUrl: s.baseUrl, apiKey: s.apiKey });
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
    await expect(resolver.resolve({ kind: "url", url, use: "image" })).rejects.toThrow(
      `the copy of ${url} kept in ${cached} was replaced by a link after reel checked it, so it was not uploaded`,
    );
    expect(s.counters.requestCount("POST", "/v1/assets")).toBe(0);
    expect(await store.findAsset(sha256(image))).toBeUndefined();
  } finally {
    await client.close();
    await store.close();
  }
});
