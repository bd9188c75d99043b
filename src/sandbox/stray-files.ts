// A sandbox killed mid-request leaves files that no record names: an upload half received in tmp/,
// an upload moved into assets/ whose record was never committed, a deleted asset whose file was
// still there when the process died. A persistent sandbox sweeps them at start, once it holds the
// data dir's lock (so no other sandbox can be writing them).
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";

async function removeAllBut(dir: string, keep: ReadonlySet<string>): Promise<void> {
  const names = await readdir(dir).catch(() => []);
  await Promise.all(
    names
      .filter((name) => !keep.has(name))
      .map((name) => rm(join(dir, name), { recursive: true, force: true })),
  );
}

/** Empties `tmpDir` and removes every file of `assetDir` that is not in `live`. */
export async function removeStrayFiles(
  assetDir: string,
  tmpDir: string,
  live: ReadonlySet<string>,
): Promise<void> {
  await Promise.all([removeAllBut(tmpDir, new Set()), removeAllBut(assetDir, live)]);
}
