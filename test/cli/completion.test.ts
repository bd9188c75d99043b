// `reel completion bash|zsh|fish`: the bash script is sourced into a real bash and asked to complete
// command lines, in a folder of real files; zsh and fish scripts are syntax-checked by their shells
// when those are installed. The flags offered are the command table's, so a new flag cannot be missed.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, test } from "vitest";
import { COMMANDS } from "../../src/cli/commands.js";
import { runCli, writeTree } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp-dir.js";

const run = promisify(execFile);

const shellAt = (name: string): string | undefined =>
  ["/usr/bin", "/bin", "/usr/local/bin"].map((dir) => join(dir, name)).find((path) => existsSync(path));

/** The script `reel completion SHELL` prints, saved in `dir`. */
async function script(shell: string, dir: string): Promise<string> {
  const result = await runCli(["completion", shell], { cwd: dir });
  expect(result.code, result.stderr).toBe(0);
  const file = join(dir, `reel-completion.${shell}`);
  await writeFile(file, result.stdout);
  return file;
}

/** What bash offers for the command line `words` (the last one being completed), in `cwd`. */
async function complete(scriptFile: string, cwd: string, words: string[]): Promise<string[]> {
  const { stdout } = await run(
    "bash",
    [
      "-c",
      'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); _reel; printf "%s\\n" "${COMPREPLY[@]}"',
      "_",
      scriptFile,
      ...words,
    ],
    { cwd },
  );
  return stdout
    .split("\n")
    .filter((line) => line !== "")
    .sort();
}

const flagsOf = async (name: string): Promise<string[]> => {
  const command = await COMMANDS.find((c) => c.name === name)!.load();
  return [...Object.keys(command.options).map((o) => `--${o}`), "--help"].sort();
};

describe("reel completion", () => {
  test("bash completes commands, every flag of the table, and files where a path goes", async () => {
    const dir = await tempDir();
    await writeTree(dir, {
      "spring.yaml": "version: 1\n",
      "autumn.yml": "version: 1\n",
      "notes.txt": "not a manifest\n",
      "media/face.png": { fixture: "tiny.png" },
    });
    const file = await script("bash", dir);
    expect(await complete(file, dir, ["reel", "ru"])).toEqual(["run"]);
    expect(await complete(file, dir, ["reel", "s"])).toEqual(["sandbox", "status"]);
    expect(await complete(file, dir, ["reel", "help", "wa"])).toEqual(["watch"]);
    for (const name of COMMANDS.map((c) => c.name)) {
      expect(await complete(file, dir, ["reel", name, "--"]), name).toEqual(await flagsOf(name));
    }
    expect(await complete(file, dir, ["reel", "run", "--sta"])).toEqual(["--state"]);
    // Manifests: *.yaml / *.yml and folders; the state file: any file; watch: folders only.
    expect(await complete(file, dir, ["reel", "run", "--sandbox", ""])).toEqual([
      "autumn.yml",
      "media",
      "spring.yaml",
    ]);
    expect(await complete(file, dir, ["reel", "run", "--state", ""])).toEqual([
      "autumn.yml",
      "media",
      "notes.txt",
      "reel-completion.bash",
      "spring.yaml",
    ]);
    expect(await complete(file, dir, ["reel", "watch", ""])).toEqual(["media"]);
    expect(await complete(file, dir, ["reel", "run", "--out", "me"])).toEqual(["media"]);
    expect(await complete(file, dir, ["reel", "run", "media/"])).toEqual([]);
    expect(await complete(file, dir, ["reel", "sandbox", "--log-level", ""])).toEqual([
      "debug",
      "error",
      "info",
      "silent",
      "warn",
    ]);
    expect(await complete(file, dir, ["reel", "run", "--concurrency", ""])).toEqual([]);
    expect(await complete(file, dir, ["reel", "completion", ""])).toEqual(["bash", "fish", "zsh"]);
  });

  test("zsh and fish scripts name every command and flag, and parse in their shells", async () => {
    const dir = await tempDir();
    for (const shell of ["zsh", "fish"] as const) {
      const file = await script(shell, dir);
      const text = (await runCli(["completion", shell], { cwd: dir })).stdout;
      for (const entry of COMMANDS) {
        const command = await entry.load();
        expect(text).toContain(shell === "zsh" ? `'${command.name}:` : `-a ${command.name} `);
        for (const flag of Object.keys(command.options)) {
          expect(text).toMatch(shell === "zsh" ? `--${flag}[` : `from ${command.name}' -l ${flag}`);
        }
      }
      const binary = shellAt(shell);
      if (binary) await run(binary, ["-n", file]); // throws on a syntax error
    }
    // bash, which is always here, checks its own too.
    await run("bash", ["-n", await script("bash", dir)]);
  });

  test("an unknown or missing shell is refused", async () => {
    const dir = await tempDir();
    const none = await runCli(["completion"], { cwd: dir });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("name the shell: reel completion bash, zsh or fish");
    const tcsh = await runCli(["completion", "tcsh"], { cwd: dir });
    expect(tcsh.code).toBe(2);
    expect(tcsh.stdout).toBe("");
  });
});
