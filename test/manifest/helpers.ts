// Fresh temp folders with real media files, for the manifest tests. Each workspace is its own
// folder (no shared fixed names) and is removed by cleanup().
import {
  copyFile,
  cp,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  symlink,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = fileURLToPath(new URL("../..", import.meta.url));
export const MEDIA = path.join(REPO, "manifests", "media");

export interface Workspace {
  /** The folder reel "was started in" (realpath). */
  readonly dir: string;
  /** A folder outside `dir`, with `secret.png` in it; `dir/media/outside.png` links to it. */
  readonly outside: string;
  write(relPath: string, text: string): Promise<string>;
  /** Copies the repository's example manifests and their media to `dir/manifests`. */
  copyExamples(): Promise<void>;
  cleanup(): Promise<void>;
}

/**
 * A temp folder with `media/` holding the example media (face.png, host.jpg, greeting.wav,
 * intro.mp3) plus traps: fake.mp3 (PNG bytes), notes.txt (no media format), cut.png and cut.wav
 * (the first half of a real file), outside.png (a symlink to a file outside the folder).
 */
export async function makeWorkspace(): Promise<Workspace> {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), "reel-manifest-")));
  const outside = await realpath(await mkdtemp(path.join(tmpdir(), "reel-outside-")));
  const media = path.join(dir, "media");
  await mkdir(media);
  for (const name of await readdir(MEDIA)) await copyFile(path.join(MEDIA, name), path.join(media, name));
  await copyFile(path.join(MEDIA, "face.png"), path.join(media, "fake.mp3"));
  await writeFile(path.join(media, "notes.txt"), "just some notes\n");
  // Cut short, as by an interrupted copy: the right signature, not the whole file.
  for (const [from, to] of [
    ["face.png", "cut.png"],
    ["greeting.wav", "cut.wav"],
  ] as const) {
    const bytes = await readFile(path.join(MEDIA, from));
    await writeFile(path.join(media, to), bytes.subarray(0, bytes.length >> 1));
  }
  await copyFile(path.join(MEDIA, "face.png"), path.join(outside, "secret.png"));
  await symlink(path.join(outside, "secret.png"), path.join(media, "outside.png"));
  return {
    dir,
    outside,
    async write(relPath, text) {
      const full = path.join(dir, relPath);
      await mkdir(path.dirname(full), { recursive: true });
      await writeFile(full, text);
      return full;
    },
    async copyExamples() {
      await cp(path.join(REPO, "manifests"), path.join(dir, "manifests"), { recursive: true });
    },
    async cleanup() {
      await rm(dir, { recursive: true, force: true });
      await rm(outside, { recursive: true, force: true });
    },
  };
}
