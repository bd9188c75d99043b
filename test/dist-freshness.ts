// Tests that spawn bin/reel.js run dist/, not src/: a dist/ older than an edited source would let
// them pass against code that no longer exists. The global setup calls ensureFreshDist before any
// test file runs, so a single `npx vitest run test/x.test.ts` after an edit tests the edit.
import { execFile } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const REPO = fileURLToPath(new URL("../", import.meta.url));

/** Every .ts under `dir` but declaration files, which compile to nothing. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/**
 * The sources under `root`/src whose compiled file in `root`/dist is missing or older than they
 * are, relative to `root`. tsc without --incremental rewrites every output, so after a build none
 * is older than its source unless the source changed since.
 */
export function staleSources(root: string): string[] {
  const src = join(root, "src");
  return sources(src).filter((source) => {
    const output = join(root, "dist", relative(src, source)).replace(/\.ts$/, ".js");
    return !existsSync(output) || statSync(output).mtimeMs < statSync(source).mtimeMs;
  });
}

/**
 * Builds dist/ (tsc -p tsconfig.build.json) when a source is newer than its output, and says so on
 * stderr. tsc's exit code is not the judge: it still emits when another part of src/ has a type
 * error in progress, and the typecheck is `npm test`'s own step. Throws, naming the files and the
 * command, when dist/ is still stale after the build.
 */
export async function ensureFreshDist(
  root = REPO,
  say: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<void> {
  const stale = staleSources(root);
  if (stale.length === 0) return;
  const names = (files: string[]) =>
    files
      .slice(0, 3)
      .map((file) => relative(root, file))
      .join(", ") + (files.length > 3 ? ` and ${files.length - 3} more` : "");
  say(`dist/ is older than ${names(stale)}: building it (tsc -p tsconfig.build.json)`);
  const tsc = join(REPO, "node_modules", "typescript", "bin", "tsc");
  const build = await promisify(execFile)(process.execPath, [tsc, "-p", "tsconfig.build.json"], {
    cwd: root,
  }).then(
    () => "",
    (error: { stdout?: string; message: string }) => error.stdout || error.message,
  );
  const still = staleSources(root);
  if (still.length > 0) {
    throw new Error(
      `dist/ is still older than ${names(still)} after tsc -p tsconfig.build.json; the tests that run bin/reel.js would test old code. tsc said:\n${build}`,
    );
  }
}

const mtime = (path: string): number => (existsSync(path) ? statSync(path).mtimeMs : -1);

/**
 * Makes dist/bundle/ again (rolldown -c, as `npm run build` does) when it is missing or older than
 * dist/: bin/reel.js would then run dist/ itself, and the tests would not test the bundle users run.
 */
export async function ensureFreshBundle(root = REPO): Promise<void> {
  if (mtime(join(root, "dist", "bundle", "main.js")) >= mtime(join(root, "dist", "cli", "main.js"))) return;
  const rolldown = join(REPO, "node_modules", "rolldown", "bin", "cli.mjs");
  await promisify(execFile)(process.execPath, [rolldown, "-c"], { cwd: root });
}
