// Where a path's identity matters (which project anchors a manifest, which output folder a video
// lies in, which folder a watch watches), it is the folder the file system resolves, not the
// spelling the user typed: a project reached through a symbolic link is the same project, and a
// comparison of spellings took it for another (a new state, every video downloaded again).
import { realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

/**
 * `path` (absolute) with every symbolic link resolved. The part that does not exist yet is kept as
 * written, under the real path of its deepest folder that does (a state or output folder a run is
 * about to make).
 */
export function realPathOf(path: string): string {
  const missing: string[] = [];
  let at = resolve(path);
  for (;;) {
    try {
      return join(realpathSync(at), ...missing.reverse());
    } catch {
      const up = dirname(at);
      if (up === at) return resolve(path);
      missing.push(basename(at));
      at = up;
    }
  }
}
