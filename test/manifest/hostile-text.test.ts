// Manifest text a hostile (or unlucky) author can produce, each refused in reel's words with its
// place: a file saved as UTF-16 or UTF-32, nesting 100,000 levels deep (which used to add the
// parser's "Maximum call stack size exceeded"), and raw NUL or other control characters, which YAML
// forbids even inside quotes (a raw NUL in a quoted string used to be accepted and sent).
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { formatProblems, loadManifests } from "../../src/manifest/index.js";
import { makeWorkspace, type Workspace } from "./helpers.js";

const GOOD = `version: 1
name: m
videos:
  - id: a
    model: actor-2
    resolution: 720p
    chunks:
      - duration: 5
        text: "hi"
`;

let ws: Workspace;
beforeEach(async () => {
  ws = await makeWorkspace();
});
afterEach(async () => {
  await ws.cleanup();
});

async function problemsOf(bytes: string | Uint8Array) {
  await writeFile(path.join(ws.dir, "m.yaml"), bytes);
  const { problems, manifests } = await loadManifests(["m.yaml"], { cwd: ws.dir });
  expect(manifests).toEqual([]);
  return problems.map((p) => `${p.file}:${p.line}:${p.col}: ${p.message}`);
}

describe("a manifest saved in a wide encoding", () => {
  const le = Buffer.from(GOOD, "utf16le");
  const be = Buffer.from(GOOD, "utf16le").swap16();
  it.each([
    ["UTF-16 little-endian with a byte order mark", Buffer.concat([Buffer.from([0xff, 0xfe]), le]), "UTF-16"],
    ["UTF-16 big-endian with a byte order mark", Buffer.concat([Buffer.from([0xfe, 0xff]), be]), "UTF-16"],
    ["UTF-16 without a byte order mark", le, "UTF-16"],
    ["UTF-32 with a byte order mark", Buffer.from([0xff, 0xfe, 0, 0, 0x76, 0, 0, 0]), "UTF-32"],
  ])("is named for what it is: %s", async (_what, bytes, name) => {
    expect(await problemsOf(bytes)).toEqual([
      `m.yaml:1:1: this file is ${name} text, not UTF-8; save it as UTF-8`,
    ]);
  });
});

describe("nesting far past any manifest's", () => {
  const deep = "mappings and lists are nested deeper than 64 levels; a manifest needs far fewer";
  it.each([
    ["flow lists", `version: 1\nx: ${"[".repeat(100_000)}${"]".repeat(100_000)}\n`],
    ["flow mappings", `version: 1\nx: ${"{a: ".repeat(100_000)}1${"}".repeat(100_000)}\n`],
    ["block lists", `version: 1\nx:\n  ${"- ".repeat(100_000)}a\n`],
    // A syntax error first: the file goes to the second parser, which recursed until the stack ran out.
    ["flow lists after a syntax error", `version: 1\n\tbad: 1\nx: ${"[".repeat(100_000)}\n`],
  ])("is refused once, at its place, in reel's words: %s", async (_what, text) => {
    const problems = await problemsOf(text);
    expect(problems.join("\n")).not.toMatch(/call stack/i);
    const deepOnes = problems.filter((p) => p.endsWith(deep));
    expect(deepOnes, problems.join("\n")).toHaveLength(1);
    expect(deepOnes[0]).toMatch(/^m\.yaml:[23]:\d+: /);
    expect(deepOnes[0]).not.toMatch(/^m\.yaml:\d+:1: /);
  });
});

describe("control characters", () => {
  it.each([
    ["a double-quoted string", `"h\0i"`, 17],
    ["a single-quoted string", `'h\0i'`, 17],
    ["a plain string", `h\0i`, 16],
  ])("refuses a raw NUL inside %s, at its place", async (_what, value, col) => {
    expect(await problemsOf(GOOD.replace(`"hi"`, value))).toEqual([
      `m.yaml:9:${col}: a NUL character (byte 0): YAML text cannot contain one, not even inside quotes; remove it`,
    ]);
  });

  it("refuses an escape character, and shows it as a symbol, never raw, in the code frame", async () => {
    await writeFile(path.join(ws.dir, "m.yaml"), GOOD.replace(`"hi"`, `"\u001b]0;owned\u0007"`));
    const { problems } = await loadManifests(["m.yaml"], { cwd: ws.dir });
    expect(problems.map((p) => `${p.line}:${p.col}: ${p.message}`)).toEqual([
      "9:16: a control character (U+001B): YAML text cannot contain one, not even inside quotes; remove it",
    ]);
    const shown = formatProblems(problems, { color: false, codeFrame: true });
    // eslint-disable-next-line no-control-regex -- control characters are what is looked for
    expect(shown).not.toMatch(/[\u0000-\u0008\u000b-\u001f]/);
    expect(shown).toContain('text: "\u241b]0;owned\u2407"');
  });

  it("still reads a tab inside a quoted string", async () => {
    await writeFile(path.join(ws.dir, "m.yaml"), GOOD.replace(`"hi"`, `"h\ti"`));
    const { problems } = await loadManifests(["m.yaml"], { cwd: ws.dir });
    expect(problems).toEqual([]);
  });
});
