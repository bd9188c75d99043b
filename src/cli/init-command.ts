// `reel init [DIR]`: makes DIR (default: the current folder) a reel project (see project/init.ts).
import { dirname, resolve } from "node:path";
import { UsageError } from "../errors/usage.js";
import { loadManifests } from "../manifest/index.js";
import { EXAMPLE_MANIFEST, holdsManifests, initProject } from "../project/init.js";
import { PROJECT_FILE_NAME } from "../project/index.js";
import { findAnchorAbove } from "../project/index.js";
import { realPathOf } from "../real-path.js";
import { shownPath } from "../user-path.js";
import type { CliIO, Command, ParsedArgs } from "./command.js";
import { EXIT } from "./exit-codes.js";
import { refuseInitOverRunManifests } from "./passed-over-states.js";

export const initCommand: Command = {
  name: "init",
  usage: `Usage: reel init [DIR]

Writes into DIR (default: the current folder; made if missing):
  ${PROJECT_FILE_NAME}                 the project file: the state and output folder of every manifest
                            under DIR, from wherever reel is run, and defaults
  ${EXAMPLE_MANIFEST}    a commented example manifest (its $schema line lets editors check it)
  media/host.jpg            an image the example uses
  .gitignore                keeps .reel/ and out/ out of git (unless one exists)
Nothing is written over: if any of these exists, nothing is written. A folder that holds
manifests already gets no example (nor its image). Refused when a state above DIR has run
the manifests under it: they would start anew in the new project's state, and be paid again.

Exit codes: 0 written, 2 a file exists already or DIR cannot be used.`,
  options: {},
  run: runInit,
};

async function runInit(args: ParsedArgs, io: CliIO): Promise<number> {
  if (args.positionals.length > 1) throw new UsageError("give at most one folder: reel init [DIR]");
  const dir = resolve(io.cwd, args.positionals[0] ?? ".");
  // Above the folder DIR is (a link's target), as the runs of its manifests will walk.
  const outer = findAnchorAbove(dirname(realPathOf(dir)));
  const theirs = holdsManifests(dir);
  if (theirs && outer) {
    // Their names as a run of DIR reads them: what a state knows of them (no media hashed).
    const { names } = await loadManifests([dir], {
      cwd: io.cwd,
      allowRead: [dir],
      hashFile: () => Promise.resolve(""),
    });
    refuseInitOverRunManifests(realPathOf(dir), io.cwd, names);
  }
  const written = initProject(dir);
  const shown = shownPath(io.cwd, dir);
  const cd = shown === "." ? "" : `cd ${shown} && `;
  const target = theirs ? "." : "manifests/";
  const pad = (command: string): string => command.padEnd(32);
  io.stdout.write(
    [
      `reel init: wrote ${written.map((f) => shownPath(io.cwd, resolve(dir, f))).join(", ")}`,
      ...(theirs ? [`(no example manifest: ${shown} holds manifests already)`] : []),
      ...(outer
        ? [
            `Note: ${shownPath(io.cwd, outer.dir)} above holds a ${outer.kind === "project" ? "project" : "state"} too; manifests under ${shown} now use this new project's state.`,
          ]
        : []),
      "Next:",
      `  ${cd}${pad(`reel plan ${target}`)}  what a run would do, nothing sent`,
      `  ${cd}${pad(`reel run --sandbox ${target}`)}  make it on the built-in emulator (free)`,
      `  ${cd}${pad(`reel run ${target}`)}  on the service (REEL_BASE_URL, REEL_API_KEY)`,
      "",
    ].join("\n"),
  );
  return EXIT.ok;
}
