// One output folder has many paths (links to it, links above it): the state names it by its real
// path, and a row an earlier reel recorded under another path to it is still in it.
import { mkdir, symlink } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { outFolderOf } from "../../src/output/out-folder.js";
import { tempDir } from "../helpers/temp-dir.js";

describe("the output folder's identity", () => {
  it("is its real path, and holds the rows recorded under any path to it, not those of another folder", async () => {
    const root = await tempDir();
    await mkdir(join(root, "videos"));
    await mkdir(join(root, "other"));
    await symlink("videos", join(root, "videos-link"));
    await symlink(".", join(root, "here"));
    const out = outFolderOf(join(root, "videos-link"));
    expect(out.key).toBe(join(root, "videos"));
    for (const recorded of [
      join(root, "videos"),
      join(root, "videos-link"),
      join(root, "here", "videos"),
      null,
    ]) {
      expect(out.holds(recorded), String(recorded)).toBe(true);
    }
    for (const recorded of [join(root, "other"), join(root, "gone"), "/elsewhere/videos"]) {
      expect(out.holds(recorded), recorded).toBe(false);
    }
    // A folder not made yet: under the real path of the deepest folder that is.
    expect(outFolderOf(join(root, "here", "new", "out")).key).toBe(join(root, "new", "out"));
  });
});
