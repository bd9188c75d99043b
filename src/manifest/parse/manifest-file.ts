// Which files in a folder are manifests: one rule for `run`, `validate` and `plan` (a folder given on
// the command line) and for `watch` (a watched folder), so that one folder means the same manifests
// to all of them. Editors and copy tools leave temporary files beside the real ones (vim's .swp and
// ~ backups, emacs's #name# and .#name locks, "name.yaml.tmp" of tools that write then rename); they
// are skipped by both, rather than read by both: such a file holds a draft or a half-written copy,
// and a `run` of the folder would pay for its videos. A file named on the command line is always read.
// The project file (src/project) is YAML too, and never a manifest.
import { basename } from "node:path";

/** The project file's name: the folder holding it is a reel project (see src/project). */
export const PROJECT_FILE_NAME = "reel.yaml";

/** The name of a manifest without `name:`: its file's name without the extension. */
export function nameFromFileName(path: string): string {
  return basename(path).replace(/\.[^.]*$/, "");
}

export function isManifestFile(path: string): boolean {
  const name = basename(path);
  if (name.startsWith(".") || name.startsWith("#") || name.endsWith("~")) return false;
  if (name === PROJECT_FILE_NAME) return false;
  return /\.ya?ml$/i.test(name);
}
