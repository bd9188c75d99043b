// Which paths a watched folder's watcher looks at: manifests (isManifestFile, the rule `run` uses for
// a folder too) and the folders that may hold them.
import { basename } from "node:path";
import { isManifestFile } from "../manifest/index.js";

/** For chokidar's `ignored`: skip hidden folders, and files that are not manifests. */
export function isIgnoredPath(path: string, isFile: boolean | undefined): boolean {
  const name = basename(path);
  if (isFile === false) return name.startsWith(".") && name !== "." && name !== "..";
  return isFile === true && !isManifestFile(path);
}
