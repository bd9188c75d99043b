// One store, one service, two addresses (`127.0.0.1` and `localhost`): the store takes one address of
// a service in use at a time, decided where the runner registers, so that two runners started at
// the same instant cannot both win. Real processes, a real sandbox over HTTP, a real PostgreSQL and
// a real state file; the money line is the sandbox's own count of generations.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { runCli, until, useCommands, useReelProcesses, writeTree } from "../helpers/cli.js";
import { usePostgres } from "../helpers/postgres.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const database = usePostgres();
const reel = useReelProcesses();
// Stopped after each test, before the sandboxes close.
const startCommand = useCommands();

function manifest(name: string, count: number): string {
  const videos = Array.from(
    { length: count },
    (_, i) => `  - id: v${i}\n    chunks:\n      - duration: 5\n        text: "${name} take ${i}"\n`,
  ).join("");
  return `version: 1\nname: ${name}\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${videos}`;
}

/** The sandbox's address with `localhost` for `127.0.0.1`: one service, another name. */
function alias(s: Sandbox): string {
  return s.baseUrl.replace("127.0.0.1", "localhost");
}

const env = (s: Sandbox, baseUrl: string, store?: string): Record<string, string> => ({
  REEL_BASE_URL: baseUrl,
  REEL_API_KEY: s.apiKey,
  ...(store !== undefined ? { REEL_STORE: store } : {}),
});

describe("two addresses of one service on one store", () => {
  it("two runners started together through two addresses: one works, the other is refused (exit 2) naming both; each job is generated once", async (context) => {
    const url = await database(context);
    // Tasks of a second: the first runner is still at work however late the second one starts.
    const s = await sandbox({ timeScale: 0.2 });
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": manifest("promo", 12) });
    // Two machines, each with its own output folder, started at the same instant.
    const runners = [s.baseUrl, alias(s)].map((address, i) =>
      reel(["run", "promo.yaml", "--concurrency", "4", "--out", `out${i}`], dir, env(s, address, url)),
    );
    const codes = await Promise.all(runners.map((r) => r.exit));
    const said = runners.map((r) => r.stderr()).join("\n----\n");
    expect([...codes].sort(), said).toEqual([0, 2]);
    const refused = runners[codes.indexOf(2)]!;
    const [here, other] = codes.indexOf(2) === 0 ? [s.baseUrl, alias(s)] : [alias(s), s.baseUrl];
    expect(refused.stderr()).toContain(
      `the store is in use through another address of the service: ${other}`,
    );
    expect(refused.stderr()).toContain(`not ${here}`);
    expect(refused.stderr()).toContain(`--base-url ${other}`);
    expect(s.counters.generationsCreated).toBe(12);
    expect(s.counters.duplicateGenerations()).toBe(0);
    expect(s.counters.peakUnfinished).toBeLessThanOrEqual(4);
  });

  it("two watchers started together through two addresses: one watches, the other is refused naming both", async (context) => {
    const url = await database(context);
    const s = await sandbox({ timeScale: 0.05 });
    const dir = await tempDir();
    await writeTree(dir, { "incoming/.keep": "" });
    const watchers = [s.baseUrl, alias(s)].map((address, i) =>
      reel(["watch", "incoming", "--settle", "100ms", "--out", `out${i}`], dir, env(s, address, url)),
    );
    await until(
      () =>
        watchers.some((w) => w.child.exitCode !== null) ||
        watchers.every((w) => w.stderr().includes("watching")),
      "one watcher to be refused, or both to watch",
    );
    const refusedAt = watchers.findIndex((w) => w.child.exitCode !== null);
    expect(refusedAt, watchers.map((w) => w.stderr()).join("\n----\n")).not.toBe(-1);
    const watching = watchers[1 - refusedAt]!;
    expect(await watchers[refusedAt]!.exit, watchers[refusedAt]!.stderr()).toBe(2);
    expect(watchers[refusedAt]!.stderr()).toContain("the store is in use through another address");
    await until(() => watching.stderr().includes("watching"), "the other watcher to watch");

    await writeTree(dir, { "incoming/w.yaml": manifest("w", 3) });
    const videos = [0, 1, 2].map((i) => join(dir, `out${1 - refusedAt}`, "w", `v${i}.mp4`));
    await until(() => videos.every((v) => existsSync(v)), "every video");
    watching.child.kill("SIGINT");
    expect(await watching.exit).toBe(0);
    expect(s.counters.generationsCreated).toBe(3);
  });

  // The same rule on a state file (whose lock already keeps a second runner out): the address is
  // checked against the jobs another address left unfinished.
  for (const kind of ["PostgreSQL store", "state file"] as const) {
    it(`${kind}: while another address has unfinished jobs a run is refused naming both; once they are done, the move goes ahead`, async (context) => {
      const store = kind === "PostgreSQL store" ? await database(context) : undefined;
      const s = await sandbox({ timeScale: 0.1 });
      const dir = await tempDir();
      await writeTree(dir, {
        "first.yaml": manifest("first", 4),
        "second.yaml": manifest("second", 2),
        "third.yaml": manifest("third", 1),
      });
      // Stopped (Ctrl-C) with its tasks submitted and still running on the service.
      const first = startCommand(["run", "first.yaml"], { cwd: dir, env: env(s, s.baseUrl, store) });
      await until(() => s.counters.generationsCreated >= 2, "tasks to be submitted");
      expect((await first.stop()).code).toBe(130);
      const made = s.counters.generationsCreated;

      const moved = await runCli(["run", "second.yaml"], { cwd: dir, env: env(s, alias(s), store) });
      expect(moved.code, moved.stderr).toBe(2);
      expect(moved.stderr).toContain(
        `the ${store ? "store" : "state file"} is in use through another address of the service: ${s.baseUrl}`,
      );
      expect(moved.stderr).toContain(`not ${alias(s)}`);
      expect(s.counters.generationsCreated).toBe(made);
      // Told it is another service, it works beside the first address.
      const told = await runCli(["run", "second.yaml", "--new-service"], {
        cwd: dir,
        env: env(s, alias(s), store),
      });
      expect(told.code, told.stderr).toBe(0);
      expect(s.counters.generationsCreated).toBe(made + 2);

      // Finished on its own address, the first address rests: the move is the user's to make.
      const finished = await runCli(["run", "first.yaml"], { cwd: dir, env: env(s, s.baseUrl, store) });
      expect(finished.code, finished.stderr).toBe(0);
      const moving = await runCli(["run", "third.yaml"], { cwd: dir, env: env(s, alias(s), store) });
      expect(moving.code, moving.stderr).toBe(0);
      expect(s.counters.generationsCreated).toBe(7);
      expect(s.counters.duplicateGenerations()).toBe(0);
    });
  }
});
