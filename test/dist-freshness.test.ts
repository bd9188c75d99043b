// The global setup's check that dist/ was built from the current src/, on small projects of its own.
import { mkdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ensureFreshDist, staleSources } from "./dist-freshness.js";
import { tempDir } from "./helpers/temp-dir.js";

/** A project of src/ and dist/ files, with a tsconfig.build.json as reel's (rootDir src, outDir dist). */
async function project(files: Record<string, string>): Promise<string> {
  const root = await tempDir("reel-dist-");
  await writeFile(join(root, "package.json"), '{ "type": "module" }\n');
  for (const [name, text] of Object.entries(files)) {
    await mkdir(join(root, name, ".."), { recursive: true });
    await writeFile(join(root, name), text);
  }
  // Emit without type-checking the standard library: 3 times quicker, and the emit is what counts.
  const options = {
    rootDir: "src",
    outDir: "dist",
    module: "NodeNext",
    target: "ES2022",
    types: [],
    skipLibCheck: true,
    noCheck: true,
  };
  await writeFile(
    join(root, "tsconfig.build.json"),
    JSON.stringify({ compilerOptions: options, include: ["src"] }),
  );
  return root;
}

/** Sets a file's modification time `seconds` from now. */
async function age(path: string, seconds: number): Promise<void> {
  const at = new Date(Date.now() + seconds * 1000);
  await utimes(path, at, at);
}

describe("dist/ freshness", () => {
  it("names each source whose output is missing or older, and never a declaration file", async () => {
    const root = await project({
      "src/a.ts": "export const a = 1;\n",
      "src/cli/b.ts": "export const b = 2;\n",
      "src/types.d.ts": "declare module 'x';\n",
      "dist/a.js": "export const a = 1;\n",
    });
    await age(join(root, "src/a.ts"), -60);
    expect(staleSources(root)).toEqual([join(root, "src/cli/b.ts")]);

    await age(join(root, "src/a.ts"), 60); // edited after the build
    expect(staleSources(root)).toEqual([join(root, "src/a.ts"), join(root, "src/cli/b.ts")]);
  });

  it("builds a stale dist/ from the current sources and says so, then finds it fresh", async () => {
    const root = await project({
      "src/answer.ts": "export const answer: number = 42;\n",
      "dist/answer.js": "old\n",
    });
    await age(join(root, "dist/answer.js"), -60);
    const said: string[] = [];

    await ensureFreshDist(root, (line) => said.push(line));

    expect(await readFile(join(root, "dist/answer.js"), "utf8")).toContain("export const answer = 42;");
    expect(said).toEqual(["dist/ is older than src/answer.ts: building it (tsc -p tsconfig.build.json)"]);
    await ensureFreshDist(root, (line) => said.push(line));
    expect(said).toHaveLength(1);
  });

  it("fails, naming the file, the command and what tsc said, when the build leaves dist/ stale", async () => {
    const root = await project({ "src/answer.ts": "export const answer = 42;\n" });
    await rm(join(root, "tsconfig.build.json"));

    const failure = ensureFreshDist(root, () => {});

    await expect(failure).rejects.toThrow(
      "dist/ is still older than src/answer.ts after tsc -p tsconfig.build.json; the tests that run bin/reel.js would test old code. tsc said:\nerror TS5058",
    );
  });
});
