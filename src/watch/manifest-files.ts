// Which files in a watched folder are manifests. Editors and copy tools leave temporary files beside
// the real ones (vim's .swp and ~ backups, emacs's #name# and .#name locks, "name.yaml.tmp" of
// tools that write then rename): none of them is read.
import { basename } from "node:path";

export function isManifestFile(path: string): boolean {
  const name = basename(path);
  if (name.startsWith(".") || name.startsWith("#") || name.endsWith("~")) return false;
  return /\.ya?ml$/i.test(name);
}

/** For chokidar's `ignored`: skip hidden folders, and files that are not manifests. */
export function isIgnoredPath(path: string, isFile: boolean | undefined): boolean {
  const name = basename(path);
  if (isFile === false) return name.startsWith(".") && name !== "." && name !== "..";
  return isFile === true && !isManifestFile(path);
}
