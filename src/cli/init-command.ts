// `reel init [DIR]`: makes DIR (default: the current folder) a reel project (see project/init.ts).
import { resolve } from "node:path";
import { UsageError } from "../errors.js";
import { EXAMPLE_MANIFEST, initProject } from "../project/init.js";
import { PROJECT_FILE_NAME } from "../project/index.js";
import { findAnchorAbove } from "../project/index.js";
import { shownPath } from "../user-path.js";
import type { CliIO, Command, ParsedArgs } from "./command.js";
import { EXIT } from "./exit-codes.js";

export const initCommand: Command = {
  name: "init",
  summary: "make a folder a reel project: reel.yaml, an example manifest, a media folder",
  usage: `Usage: reel init [DIR]

Writes into DIR (default: the current folder; made if missing):
  ${PROJECT_FILE_NAME}                 the project file: the state and output folder of every manifest
                            under DIR, from wherever reel is run, and defaults
  ${EXAMPLE_MANIFEST}    a commented example manifest (its $schema line lets editors check it)
  media/host.jpg            an image the example uses
  .gitignore                keeps .reel/ and out/ out of git (unless one exists)
Nothing is written over: if any of these exists, nothing is written.

Exit codes: 0 written, 2 a file exists already or DIR cannot be used.`,
  options: {},
  run: runInit,
};

async function runInit(args: ParsedArgs, io: CliIO): Promise<number> {
  if (args.positionals.length > 1) throw new UsageError("give at most one folder: reel init [DIR]");
  const dir = resolve(io.cwd, args.positionals[0] ?? ".");
  const outer = findAnchorAbove(resolve(dir, ".."));
  const written = initProject(dir);
  const shown = shownPath(io.cwd, dir);
  const cd = shown === "." ? "" : `cd ${shown} && `;
  io.stdout.write(
    [
      `reel init: wrote ${written.map((f) => shownPath(io.cwd, resolve(dir, f))).join(", ")}`,
      ...(outer
        ? [
            `Note: ${shownPath(io.cwd, outer.dir)} above holds a ${outer.kind === "project" ? "project" : "state"} too; manifests under ${shown} now use this new project's state.`,
          ]
        : []),
      "Next:",
      `  ${cd}reel plan manifests/              what a run would do, nothing sent`,
      `  ${cd}reel run --sandbox manifests/     make it on the built-in emulator (free)`,
      `  ${cd}reel run manifests/               on the service (REEL_BASE_URL, REEL_API_KEY)`,
      "",
    ].join("\n"),
  );
  return EXIT.ok;
}
