// Which output folder a video recorded in the state lies in. The state names it by its real path
// (real-path.ts): one output folder given as `out` and as `link-to-out` is one folder, whose videos
// are there whichever way it is reached, not to be downloaded again at each switch.
import { realPathOf } from "../real-path.js";

export interface OutFolder {
  /** How the state names this folder (a row's `out_dir`). */
  readonly key: string;
  /**
   * Whether a row's `out_dir` is this folder: the same key, or a path to it recorded by a reel
   * that named folders as they were typed; null (rows of earlier reels) is taken to be this one.
   */
  holds(recorded: string | null): boolean;
}

export function outFolderOf(outDir: string): OutFolder {
  const key = realPathOf(outDir);
  const seen = new Map<string, boolean>([[key, true]]);
  return {
    key,
    holds(recorded) {
      if (recorded === null) return true;
      let here = seen.get(recorded);
      if (here === undefined) {
        here = realPathOf(recorded) === key;
        seen.set(recorded, here);
      }
      return here;
    },
  };
}
