// `reel init [DIR]`: a project a newcomer can run at once: the project file, a commented example
// manifest whose `$schema` line finds reel's schema from where it is, and a media folder with an
// image it uses. Nothing is written over: when any of these exists, nothing is written at all. A
// folder that holds manifests already gets the project file alone (and .gitignore).
import {
  constants,
  copyFileSync,
  type Dirent,
  existsSync,
  mkdirSync,
  readdirSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { UsageError } from "../errors/usage.js";
import { isManifestFile } from "../manifest/parse/manifest-file.js";
import { PROJECT_DEFAULTS, PROJECT_FILE_NAME } from "./project-file.js";

/** reel's own files, found from this module (dist/project/init.js or src/project/init.ts). */
const PACKAGE_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MANIFEST_SCHEMA = join(PACKAGE_ROOT, "schemas", "manifest.schema.json");
const PROJECT_SCHEMA = join(PACKAGE_ROOT, "schemas", "project.schema.json");
const EXAMPLE_IMAGE = join(PACKAGE_ROOT, "manifests", "media", "host.jpg");

export const EXAMPLE_MANIFEST = "manifests/example.yaml";
const EXAMPLE_IMAGE_FILE = "media/host.jpg";
/** The files of the example alone. */
const EXAMPLE_FILES: ReadonlySet<string> = new Set([EXAMPLE_MANIFEST, EXAMPLE_IMAGE_FILE]);

/** The files init writes, relative to the project folder. */
export function initFiles(dir: string): { path: string; text?: string; copyOf?: string }[] {
  const schemaFrom = (file: string, schema: string): string =>
    relative(dirname(join(dir, file)), schema)
      .split(sep)
      .join("/");
  return [
    {
      path: PROJECT_FILE_NAME,
      text: `# yaml-language-server: $schema=${schemaFrom(PROJECT_FILE_NAME, PROJECT_SCHEMA)}
#
# This folder is a reel project: every reel command run on manifests under it (from any folder)
# uses the state and output folder below, so a run from elsewhere never pays twice for a video.
# Paths are relative to this file. Flags (--state, --out, --concurrency, --base-url) and REEL_*
# variables override these. The API key is never written here: set REEL_API_KEY.
version: 1
state: ${PROJECT_DEFAULTS.state} # what was sent, paid and downloaded; keep it
out: ${PROJECT_DEFAULTS.out} # the videos, results.jsonl and the report (index.html)
# concurrency: 4 # generations unfinished at once (your account's slots)
# baseUrl: https://api.example.com # the service's address (or --sandbox to try reel for free)
`,
    },
    {
      path: EXAMPLE_MANIFEST,
      text: `# yaml-language-server: $schema=${schemaFrom(EXAMPLE_MANIFEST, MANIFEST_SCHEMA)}
#
# An example manifest: 'reel plan manifests/' shows what a run would do, 'reel run --sandbox
# manifests/' makes it on the built-in emulator (free), 'reel run manifests/' on the service.
# Each video is one job: its identity is this manifest's name and the video's id. Editing a
# video makes a new job (the old video is kept).
version: 1
name: example # the folder of its videos under out/; default: the file name
defaults: # apply to every video unless it says otherwise
  model: actor-2
  resolution: 720p
  aspectRatio: "16:9"
videos:
  - id: hello # letters, digits, '.', '_', '-'
    chunks:
      - duration: 5 # seconds; actor models take 5 or 10
        text: "A barista looks up from the counter, smiles and waves hello."

  - id: host-intro
    model: actor-1
    source: ../media/host.jpg # relative to this file; or an https URL, or {asset: 123}
    chunks:
      - duration: 5
        text: "The host greets the audience, warm and confident."
        speech: { voice: 17, text: "Welcome! Here is what's new this week." } # quoted: see below
# Quote texts that hold ': ' or ' #' (YAML reads the rest as a key or a comment).
`,
    },
    { path: EXAMPLE_IMAGE_FILE, copyOf: EXAMPLE_IMAGE },
    { path: ".gitignore", text: `# reel's state and output (see reel.yaml)\n/.reel/\n/out/\n` },
  ];
}

/**
 * Whether `dir` holds a manifest (as `reel run DIR` would read it) at any depth. A folder of the
 * user's manifests gets no example among them: the next run of the folder would pay for it.
 */
export function holdsManifests(dir: string): boolean {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return false;
  }
  return entries.some((entry) => {
    if (entry.name.startsWith(".")) return false;
    if (entry.isDirectory()) return holdsManifests(join(dir, entry.name));
    return (entry.isFile() || entry.isSymbolicLink()) && isManifestFile(entry.name);
  });
}

/**
 * Writes the project into `dir` (made if missing): without the example and its image when `dir`
 * holds manifests already. Returns the paths written, relative to `dir`.
 */
export function initProject(dir: string): string[] {
  const example = !holdsManifests(dir);
  const files = initFiles(dir).filter((f) => example || !EXAMPLE_FILES.has(f.path));
  // .gitignore is the user's own when it exists: kept, not a reason to refuse.
  const taken = files.filter((f) => f.path !== ".gitignore" && existsSync(join(dir, f.path)));
  if (taken.length > 0) {
    throw new UsageError(
      `${taken.map((f) => join(dir, f.path)).join(", ")} already ${taken.length === 1 ? "exists" : "exist"}: nothing was written (reel init never writes over a file)`,
    );
  }
  const written: string[] = [];
  for (const file of files) {
    const path = join(dir, file.path);
    if (existsSync(path)) continue;
    mkdirSync(dirname(path), { recursive: true });
    if (file.copyOf !== undefined) copyFileSync(file.copyOf, path, constants.COPYFILE_EXCL);
    else writeFileSync(path, file.text!, { flag: "wx" });
    written.push(file.path);
  }
  return written;
}
