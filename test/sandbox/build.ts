// The CLI tests that spawn bin/reel.js need dist/: built here, once per change of src/.
import { execFile } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect } from "vitest";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** bin/reel.js runs dist/: build it when src/ is newer (tsc's exit code covers other folders' work in progress). */
export async function ensureBuilt(): Promise<void> {
  const built = join(ROOT, "dist/cli/main.js");
  if (existsSync(built) && statSync(built).mtimeMs >= newestMtime(join(ROOT, "src"))) return;
  await promisify(execFile)(
    process.execPath,
    [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"],
    { cwd: ROOT },
  ).catch(() => undefined);
  expect(existsSync(join(ROOT, "dist/cli/sandbox-command.js"))).toBe(true);
}
