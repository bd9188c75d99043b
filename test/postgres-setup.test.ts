// The test suite's global setup starts an installed PostgreSQL but never installs one: apt-get is
// .ci/run's. Here PostgreSQL's tools are missing from the PATH and apt-get records any call.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { startInstalledPostgres } from "./global-setup.js";
import { tempDir } from "./helpers/temp-dir.js";

it("the global setup's PostgreSQL start, where none is installed, fails without calling apt-get", async () => {
  const bin = await tempDir("reel-no-pg-");
  const called = join(bin, "apt-get-was-called");
  await writeFile(join(bin, "apt-get"), `#!${which("bash")}\necho "$@" > ${called}\n`);
  await chmod(join(bin, "apt-get"), 0o755);
  for (const tool of ["bash", "id"]) await symlink(which(tool), join(bin, tool));

  expect(startInstalledPostgres({ PATH: bin })).toBe(
    "postgres-for-tests: PostgreSQL is not installed (.ci/run installs it; or apt-get install postgresql, as root)",
  );
  expect(existsSync(called)).toBe(false);
});

function which(tool: string): string {
  return execFileSync("bash", ["-c", `command -v ${tool}`], { encoding: "utf8" }).trim();
}
