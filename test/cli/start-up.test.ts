// What the real binary loads to start: `reel --version` and `--help` load no command and no package,
// `reel status` on a state file loads neither the PostgreSQL driver nor the HTTP client, and a run
// off a terminal no live display. Each
// module loaded is CPU spent before the command's first line (a third of a second when every
// command's code was loaded at once). Recorded by a module hook in a real child process.
import { execFile } from "node:child_process";
import { copyFile, mkdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { describe, expect, test } from "vitest";
import { BIN, runCli, writeTree } from "../helpers/cli.js";
import { usePostgres } from "../helpers/postgres.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const run = promisify(execFile);
const database = usePostgres();
const sandbox = useSandboxes();

// Runs in the hooks' thread: appends each module's URL to the file it is given.
const HOOKS = `import { appendFileSync } from "node:fs";
let file;
export function initialize(data) { file = data.file; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(file, result.url + "\\n");
  return result;
}
`;

/** Runs the binary with `argv` in `cwd`; its output and the modules it loaded (URLs). */
async function modulesLoaded(
  argv: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ stdout: string; modules: string[] }> {
  const dir = await tempDir();
  const hooks = join(dir, "hooks.mjs");
  const register = join(dir, "register.mjs");
  const list = join(dir, "loaded.txt");
  await writeFile(hooks, HOOKS);
  await writeFile(
    register,
    `import { appendFileSync } from "node:fs";\nimport { createRequire, register } from "node:module";\nimport { pathToFileURL } from "node:url";\nregister(${JSON.stringify(pathToFileURL(hooks).href)}, { data: { file: ${JSON.stringify(list)} } });\n` +
      // What was required (a package loaded on first use by createRequire meets no import hook), and
      // Node's own modules (node:internal/... among them), which neither records.
      `const cache = createRequire(import.meta.url).cache;\nprocess.on("exit", () => appendFileSync(${JSON.stringify(list)}, [...Object.keys(cache).map((f) => pathToFileURL(f).href), ...process.moduleLoadList.filter((m) => m.startsWith("NativeModule ")).map((m) => "node:" + m.slice(13))].map((line) => line + "\\n").join("")));\n`,
  );
  await writeFile(list, "");
  const { stdout } = await run(process.execPath, ["--import", pathToFileURL(register).href, BIN, ...argv], {
    cwd,
    env: { PATH: process.env.PATH ?? "", ...env },
  });
  const modules = (await readFile(list, "utf8")).split("\n").filter((line) => line !== "");
  return { stdout, modules };
}

const packagesOf = (modules: string[]): string[] => [
  ...new Set(modules.flatMap((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1] ?? [])),
];

const ONE_VIDEO = `version: 1
name: hello
videos:
  - id: wave
    model: actor-2
    resolution: 720p
    chunks:
      - duration: 5
        text: "a presenter waves"
`;

describe("start-up", () => {
  test("reel --version and reel --help load no command and no package", async () => {
    const dir = await tempDir();
    for (const argv of [["--version"], ["--help"]]) {
      const { stdout, modules } = await modulesLoaded(argv, dir);
      expect(stdout).toMatch(argv[0] === "--version" ? /^reel \d/ : /Commands:/);
      expect(packagesOf(modules), argv[0]).toEqual([]);
      expect(
        modules.filter((url) => url.endsWith("-command.js")),
        argv[0],
      ).toEqual([]);
    }
  });

  test("reel status on a state file loads neither the PostgreSQL driver nor the HTTP client; a run off a terminal no live display", async () => {
    const dir = await tempDir();
    await writeTree(dir, { "hello.yaml": ONE_VIDEO });
    const done = await runCli(["run", "--sandbox", "hello.yaml"], { cwd: dir });
    expect(done.code, done.stderr).toBe(0);
    const { stdout, modules } = await modulesLoaded(["status"], dir);
    expect(stdout).toContain("hello");
    const packages = packagesOf(modules);
    expect(packages).toContain("better-sqlite3");
    expect(packages).not.toContain("pg");
    expect(packages).not.toContain("undici");
    expect(packages).not.toContain("pino");
    // A run off a terminal (a runner of a fleet, its output in a log) draws no live display.
    const again = await modulesLoaded(["run", "--sandbox", "hello.yaml"], dir);
    expect(again.stdout).toBe("");
    expect(packagesOf(again.modules)).not.toContain("log-update");
  });

  // A runner of a fleet: what it loads is paid again by every runner of every start.
  test("a run of a manifest without problems on a PostgreSQL store loads neither the SQLite driver nor the YAML document model nor the CSV reader nor undici's index nor Node's fetch nor child processes", async (context) => {
    const url = await database(context);
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "hello.yaml": ONE_VIDEO });
    const env = { REEL_STORE: url, REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey };
    const { modules } = await modulesLoaded(["run", "hello.yaml"], dir, env);
    expect(await readFile(join(dir, "out", "hello", "wave.mp4")).then((b) => b.length > 0)).toBe(true);
    const packages = packagesOf(modules);
    expect(packages).toContain("pg");
    expect(packages).toContain("js-yaml");
    expect(packages).not.toContain("better-sqlite3");
    expect(packages).not.toContain("yaml");
    expect(packages).not.toContain("csv-parse");
    // undici's parts, not its index (which loads fetch, WebSocket, caches, mock agents: 70 ms).
    expect(packages).toContain("undici");
    expect(modules.filter((m) => /\/node_modules\/undici\/index\.js$/.test(m))).toEqual([]);
    expect(modules.filter((m) => m.includes("/node_modules/undici/lib/web/"))).toEqual([]);
    // Nor Node's own fetch (pg asks whether it runs in a Cloudflare Worker by making a Response) nor
    // child processes (--open's, --notify's on-end command's): 20 to 30 ms together.
    expect(modules).not.toContain("node:internal/deps/undici/undici");
    expect(modules).not.toContain("node:child_process");
    // Its own code from the bundle (npm run build): a few files, not some 300 modules of dist/.
    const own = modules.filter((m) => m.includes("/dist/") && !m.includes("/node_modules/"));
    expect(own.filter((m) => !m.includes("/dist/bundle/"))).toEqual([]);
    expect(new Set(own).size).toBeLessThan(60);
  });

  // undici's HTTP parser, llhttp, is WebAssembly: V8 recompiled its main function optimized after
  // the first responses, about 80 ms of CPU on another thread, at every start of every runner.
  test("a run compiles undici's HTTP parser once, at V8's first tier, never again optimized", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "hello.yaml": ONE_VIDEO });
    const { stdout } = await run(
      process.execPath,
      ["--trace-wasm-compilation-times", BIN, "run", "hello.yaml", "--state", join(dir, "state.db")],
      { cwd: dir, env: { PATH: process.env.PATH ?? "", REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey } },
    );
    expect(await readFile(join(dir, "out", "hello", "wave.mp4")).then((b) => b.length > 0)).toBe(true);
    const compiled = stdout.split("\n").filter((line) => line.startsWith("Compiled function"));
    expect(compiled.filter((line) => line.includes("using Liftoff")).length).toBeGreaterThan(0);
    expect(compiled.filter((line) => !line.includes("using Liftoff"))).toEqual([]);
  });

  test("bin/reel.js runs dist/bundle/ when it was made from the current dist/, dist/ itself when tsc wrote dist/ since", async () => {
    // A copy of the entry point beside a dist/ whose two builds say which one ran.
    const dir = await tempDir();
    await writeTree(dir, {
      "package.json": '{ "type": "module" }\n',
      "dist/cli/main.js": 'export async function main() { process.stdout.write("dist\\n"); return 0; }\n',
      "dist/bundle/main.js":
        'export async function main() { process.stdout.write("bundle\\n"); return 0; }\n',
    });
    await mkdir(join(dir, "bin"));
    await copyFile(BIN, join(dir, "bin", "reel.js"));
    const ran = async () => (await run(process.execPath, [join(dir, "bin", "reel.js")], { cwd: dir })).stdout;
    const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, seconds));
    await utimes(join(dir, "dist", "cli", "main.js"), at(0), at(0));
    await utimes(join(dir, "dist", "bundle", "main.js"), at(1), at(1));
    expect(await ran()).toBe("bundle\n");
    // A package's files all carry one date (npm pack): the bundle, too.
    await utimes(join(dir, "dist", "bundle", "main.js"), at(0), at(0));
    expect(await ran()).toBe("bundle\n");
    // tsc alone after the bundle (a developer's edit): the bundle is old code, dist/ runs.
    await utimes(join(dir, "dist", "cli", "main.js"), at(2), at(2));
    expect(await ran()).toBe("dist\n");
    await rm(join(dir, "dist", "bundle"), { recursive: true });
    expect(await ran()).toBe("dist\n");
  });
});
