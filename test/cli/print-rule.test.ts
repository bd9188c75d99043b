// Only the CLI's entry point (src/cli/main.ts) exits the process or writes to its streams: every
// command returns its exit code and prints through the io it is handed, so that the entry point
// flushes the output before it exits and tests run the commands in-process. The lint rule says so.
import { ESLint } from "eslint";
import { expect, it } from "vitest";
import { REPO } from "../helpers/cli.js";

const eslint = new ESLint({ cwd: REPO });

/** The rules `code` breaks, placed at `file` of the repository. */
async function broken(code: string, file: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${REPO}/${file}` });
  return result!.messages.map((m) => m.ruleId ?? m.message);
}

const PRINTS_AND_EXITS = [
  `console.log("done");`,
  `process.stdout.write("done\\n");`,
  `process.stderr.write("failed\\n");`,
  `process.exit(1);`,
];

it.each(["src/cli/run-command.ts", "src/cli/some-new-command.ts", "src/engine/engine.ts", "src/watch/x.ts"])(
  "refuses printing and exiting in %s",
  async (file) => {
    for (const line of PRINTS_AND_EXITS)
      expect(await broken(`export {};\n${line}\n`, file), line).not.toEqual([]);
  },
);

it("lets the entry point print and exit", async () => {
  for (const line of PRINTS_AND_EXITS)
    expect(await broken(`export {};\n${line}\n`, "src/cli/main.ts")).toEqual([]);
});
