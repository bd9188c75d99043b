// Mistakes on the command line: each gets one line in reel's words that names the fix, exit 2, and
// nothing is started (no state file, no output folder).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { runCli, writeTree } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp-dir.js";

const ONE = `version: 1
videos:
  - id: a
    model: actor-2
    resolution: 720p
    chunks:
      - duration: 5
        text: "hello"
`;

async function refused(argv: string[]): Promise<string> {
  const dir = await tempDir();
  await writeTree(dir, { "one.yaml": ONE, "a-file": "not a folder\n" });
  const result = await runCli(argv, { cwd: dir });
  expect(result.code, result.stderr).toBe(2);
  expect(existsSync(join(dir, ".reel")), "a state folder was made").toBe(false);
  expect(existsSync(join(dir, "out")), "an output folder was made").toBe(false);
  expect(result.stderr).not.toMatch(/positional argument|\n\s+at /);
  return result.stderr;
}

it("a mistyped option is named, with the option meant", async () => {
  const stderr = await refused(["run", "--sandbox", "--concurency", "3", "one.yaml"]);
  expect(stderr).toContain("reel run: unknown option --concurency; did you mean --concurrency?");
  expect(stderr).toContain("reel run --help");
  // Nothing near enough: no guess.
  expect(await refused(["plan", "--frobnicate", "one.yaml"])).toMatch(/unknown option --frobnicate\n/);
  // Underscores for dashes, and a prefix of a long name.
  expect(await refused(["run", "--sandbox", "--retry_failed", "one.yaml"])).toContain(
    "did you mean --retry-failed?",
  );
  expect(await refused(["run", "--sandbox", "--resubmit", "one.yaml"])).toContain(
    "did you mean --resubmit-uncertain?",
  );
});

it("an option without its value, or a value given to a switch, says so", async () => {
  expect(await refused(["run", "--sandbox", "one.yaml", "--concurrency"])).toContain(
    "reel run: --concurrency needs a value",
  );
  const ambiguous = await refused(["run", "--concurrency", "--sandbox", "one.yaml"]);
  expect(ambiguous).toContain("--concurrency needs a value");
  expect(ambiguous).toContain("--concurrency=VALUE");
  expect(await refused(["status", "--json=yes"])).toContain("reel status: --json takes no value");
});

it("watch refuses a folder that does not exist, or a file, before starting anything", async () => {
  const missing = await refused(["watch", "--sandbox", "incomming"]);
  expect(missing).toMatch(/no folder at \S*incomming; check the path, or create it first/);
  expect(await refused(["watch", "--sandbox", "a-file"])).toMatch(/a-file is a file; give the folder/);
});

it("every command's --help lists its options and its exit codes", async () => {
  const dir = await tempDir();
  for (const command of [
    "validate",
    "plan",
    "run",
    "watch",
    "status",
    "approve",
    "reject",
    "undecide",
    "retake",
    "clean",
    "sandbox",
  ]) {
    const help = await runCli([command, "--help"], { cwd: dir });
    expect(help.code).toBe(0);
    expect(help.stdout, command).toMatch(new RegExp(`^reel ${command}: .+\\n\\nUsage: reel ${command} `));
    expect(help.stdout, command).toContain("\nOptions:\n");
    expect(help.stdout, command).toMatch(/\nExit codes: 0/);
    expect((await runCli(["help", command], { cwd: dir })).stdout).toBe(help.stdout);
  }
});

it("with --json, an option mistake is a JSON error in reel's words; plan takes run's --out and ignores it", async () => {
  const dir = await tempDir();
  await writeTree(dir, { "one.yaml": ONE, "bad.yaml": ONE.replace("720p", "540p") });
  const typo = await runCli(["run", "--json", "--concurency", "3", "one.yaml"], { cwd: dir });
  expect(typo.code).toBe(2);
  expect(JSON.parse(typo.stdout)).toEqual({
    ok: false,
    error: { code: "E_USAGE", message: "unknown option --concurency; did you mean --concurrency?" },
  });
  const invalid = await runCli(["run", "--sandbox", "--json", "bad.yaml"], { cwd: dir });
  expect(invalid.code).toBe(2);
  expect(JSON.parse(invalid.stdout)).toMatchObject({
    ok: false,
    outcome: "invalid",
    error: { code: "E_INVALID", message: "1 problem in 1 file; nothing was sent" },
  });
  const plan = await runCli(["plan", "one.yaml", "--out", "elsewhere", "--concurrency", "8"], { cwd: dir });
  expect(plan.code, plan.stderr).toBe(0);
  expect(existsSync(join(dir, "elsewhere"))).toBe(false);
});

it("--allow-read naming a file, and --only with [...], say what is wrong", async () => {
  const file = await refused(["validate", "--allow-read", "a-file", "one.yaml"]);
  expect(file).toContain("--allow-read a-file: is a file, not a folder; give the folder that holds it");
  const brackets = await refused(["plan", "--only", "one/[ab]", "one.yaml"]);
  expect(brackets).toContain(
    "'*' and '?' are the only wildcards: [...] and {...} are taken as they are written",
  );
});
