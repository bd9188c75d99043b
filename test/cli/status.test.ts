// `reel status` after real runs against the sandbox over real HTTP, with real state files and
// output folders: what a user reads there (jobs per manifest and state, from the state file alone).
import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { runCli, writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { readResults } from "../helpers/results.js";
import { tempDir } from "../helpers/temp-dir.js";
import { expectServedVideo } from "../helpers/videos.js";

const sandbox = useSandboxes();

// `ghost` names an asset the service never had: its task ends Fail, with the service's reason.
const SHOP = `version: 1
name: shop
defaults:
  model: actor-2
  resolution: 720p
videos:
  - id: mug
    chunks:
      - duration: 5
        text: "a mug on a table"
  - id: lamp
    chunks:
      - duration: 5
        text: "a lamp turns on"
  - id: ghost
    source: { asset: 999999 }
    chunks:
      - duration: 5
        text: "nobody here"
`;

// Its file is launch.yaml: status filters by the manifest's name, not the file's.
const PROMO = `version: 1
name: promo
defaults:
  model: actor-2
  resolution: 720p
videos:
  - id: teaser
    chunks:
      - duration: 5
        text: "a teaser"
  - id: trailer
    chunks:
      - duration: 10
        text: "a trailer"
`;

interface StatusJob {
  manifest: string;
  id: string;
  status: string;
  taskId: string | null;
  file: string | null;
  error: string | null;
  specHash: string;
  service: string;
}
interface StatusJson {
  ok: boolean;
  state: string;
  manifests: Record<string, Record<string, number>>;
  services: Record<string, Record<string, Record<string, number>>>;
  jobs: StatusJob[];
}

function env(s: Sandbox, extra: Record<string, string> = {}): Record<string, string> {
  return { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey, ...extra };
}

/** Every request the sandbox answered, whatever the route. */
function requestTotal(s: Sandbox): number {
  return [...s.counters.requests.values()].reduce((a, b) => a + b, 0);
}

/** A folder where shop and promo have run once: 4 Success, 1 Fail (run exits 1 for the Fail). */
async function ranWorkspace(s: Sandbox): Promise<string> {
  const dir = await tempDir();
  await writeTree(dir, { "manifests/shop.yaml": SHOP, "manifests/sub/launch.yaml": PROMO });
  const run = await runCli(["run", "manifests"], { cwd: dir, env: env(s) });
  expect(run.code, run.stderr).toBe(1);
  return dir;
}

function parseStatus(stdout: string): StatusJson {
  // One JSON document on one line: what `jq` or a script reads.
  expect(stdout.trim().split("\n")).toHaveLength(1);
  return JSON.parse(stdout) as StatusJson;
}

/**
 * Status's text after its first line, which names the state it read and the output folder (checked
 * here: every status says which state it used).
 */
function table(stdout: string): string {
  const [first, ...rest] = stdout.split("\n");
  expect(first, stdout).toMatch(/^state .+ · out .+ · /);
  return rest.join("\n");
}

describe("reel status", () => {
  it("shows each manifest's jobs by state and the failed ones with their reason, without calling the service", async () => {
    const s = await sandbox();
    const dir = await ranWorkspace(s);
    const before = requestTotal(s);

    const result = await runCli(["status"], { cwd: dir, env: env(s) });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    expect(table(result.stdout)).toMatch(/^promo +2 jobs: 2 Success$/m);
    expect(table(result.stdout)).toMatch(/^shop +3 jobs: 1 Fail, 2 Success$/m);
    expect(result.stdout).toContain("  shop/ghost: Fail: asset 999999 not found\n");
    // Only the failed job gets a line of its own.
    expect(result.stdout).not.toMatch(/shop\/mug|promo\/teaser/);
    // Read from the state file alone: the service, though reachable, saw nothing.
    expect(requestTotal(s)).toBe(before);
  });

  it("--json prints one document whose jobs match results.jsonl and the videos on disk", async () => {
    const s = await sandbox();
    const dir = await ranWorkspace(s);
    const result = await runCli(["status", "--json"], { cwd: dir, env: {} });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    const status = parseStatus(result.stdout);
    expect(status.state).toBe(join(dir, ".reel", "state.db"));
    expect(status.manifests).toEqual({ promo: { Success: 2 }, shop: { Fail: 1, Success: 2 } });
    expect(status.services).toEqual({ [s.baseUrl]: status.manifests });

    const results = await readResults<StatusJob>(dir);
    expect(status.jobs).toHaveLength(results.length);
    for (const r of results) {
      const job = status.jobs.find((j) => j.manifest === r.manifest && j.id === r.id);
      expect(job, `${r.manifest}/${r.id}`).toMatchObject({
        status: r.status,
        taskId: r.taskId,
        file: r.file,
        error: r.error,
        specHash: r.specHash,
        service: s.baseUrl,
      });
    }
    // Task ids are the service's, as strings (int64 ids lose digits as JSON numbers), one per job.
    const taskIds = status.jobs.map((j) => j.taskId);
    for (const id of taskIds) expect(id).toMatch(/^\d+$/);
    expect(new Set(taskIds).size).toBe(5);
    for (const job of status.jobs.filter((j) => j.status === "Success")) {
      await expectServedVideo(join(dir, "out", String(job.file)));
    }
    expect(status.jobs.find((j) => j.id === "ghost")).toMatchObject({
      file: null,
      error: "asset 999999 not found",
    });
  });

  it("with PATHs, shows only the manifests found there, by their name", async () => {
    const s = await sandbox();
    const dir = await ranWorkspace(s);

    const folder = await runCli(["status", "manifests/sub"], { cwd: dir, env: {} });
    expect(folder.code).toBe(0);
    expect(table(folder.stdout)).toMatch(/^promo +2 jobs: 2 Success\n$/);

    const file = await runCli(["status", "manifests/shop.yaml", "--json"], { cwd: dir, env: {} });
    expect(file.code).toBe(0);
    const status = parseStatus(file.stdout);
    expect(Object.keys(status.manifests)).toEqual(["shop"]);
    expect(status.jobs.map((j) => j.id).sort()).toEqual(["ghost", "lamp", "mug"]);

    // A path that does not exist is an error of the user's, said in one line, not an empty status.
    const missing = await runCli(["status", "manifests/nope.yaml"], { cwd: dir, env: {} });
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toMatch(/^reel status: .*manifests\/nope\.yaml.*\n$/);
  });

  it("with PATHs, counts only the videos the manifests list now: a removed one is no longer theirs", async () => {
    const s = await sandbox();
    const dir = await ranWorkspace(s);
    const withoutMug = SHOP.replace(/ {2}- id: mug\n(?: {4}.*\n|\s{6}.*\n)*?(?= {2}- id: lamp)/, "");
    expect(withoutMug).not.toContain("mug");
    await writeFile(join(dir, "manifests", "shop.yaml"), withoutMug);

    const result = await runCli(["status", "manifests/shop.yaml"], { cwd: dir, env: {} });
    expect(table(result.stdout)).toMatch(/^shop +2 jobs: 1 Fail, 1 Success\n/);
    // Without PATH, the state's record: every job that ran.
    expect((await runCli(["status"], { cwd: dir, env: {} })).stdout).toMatch(
      /^shop +3 jobs: 1 Fail, 2 Success$/m,
    );
  });

  // Here its source image was moved away after the run: it has a name still, and its jobs show.
  it("with PATHs, still shows the recorded jobs of a manifest that no longer validates", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    const withImage = SHOP.replace("source: { asset: 999999 }", "source: ./face.png");
    await writeTree(dir, {
      "manifests/shop.yaml": withImage,
      "manifests/face.png": { fixture: "tiny.png" },
      "manifests/sub/launch.yaml": PROMO,
    });
    expect((await runCli(["run", "manifests"], { cwd: dir, env: env(s) })).code).toBe(0);
    await rm(join(dir, "manifests", "face.png"));

    const result = await runCli(["status", "manifests"], { cwd: dir, env: {} });
    expect(result.code).toBe(0);
    expect(table(result.stdout)).toMatch(/^promo +2 jobs: 2 Success$/m);
    expect(table(result.stdout)).toMatch(/^shop +3 jobs: 3 Success$/m);
  });

  it("says that nothing has run when there is no state file, exits 0 and creates nothing", async () => {
    const dir = await tempDir();
    await writeTree(dir, { "manifests/shop.yaml": SHOP });

    const human = await runCli(["status"], { cwd: dir, env: {} });
    expect(human.code).toBe(0);
    expect(table(human.stdout)).toBe(
      `No state file at ${join(dir, ".reel", "state.db")}: nothing has run yet.\n`,
    );
    expect(human.stderr).toBe("");

    // REEL_STATE names the state file, as for run; the manifests given still parse.
    const json = await runCli(["status", "manifests", "--json"], {
      cwd: dir,
      env: { REEL_STATE: "elsewhere/state.db" },
    });
    expect(json.code).toBe(0);
    expect(parseStatus(json.stdout)).toEqual({
      ok: true,
      state: join(dir, "elsewhere", "state.db"),
      store: null,
      out: join(dir, "out"),
      project: null,
      anchor: { dir, kind: "new" },
      exists: false, // a mistyped REEL_STATE is told apart from a state with no jobs
      manifests: {},
      services: {},
      jobs: [],
    });
    // Looking must not leave an empty state file or folder behind.
    expect(existsSync(join(dir, ".reel"))).toBe(false);
    expect(existsSync(join(dir, "elsewhere"))).toBe(false);
  });

  it("--base-url keeps apart the jobs of two services that share one state file", async () => {
    const a = await sandbox();
    // Ids above 2^53 on b: its task ids differ from a's and must keep every digit.
    const b = await sandbox({ bigIds: true });
    const dir = await tempDir();
    await writeTree(dir, { "launch.yaml": PROMO });
    for (const [s, out] of [
      [a, "out-a"],
      [b, "out-b"],
    ] as const) {
      // b is really another service: --new-service says so (without it, jobs already sent to a
      // are refused, as b's address could be another name of a).
      const run = await runCli(
        ["run", "launch.yaml", "--state", "shared.db", "--out", out, "--new-service"],
        {
          cwd: dir,
          env: env(s),
        },
      );
      expect(run.code, run.stderr).toBe(0);
    }
    const before = requestTotal(a) + requestTotal(b);

    const all = parseStatus(
      (await runCli(["status", "--state", "shared.db", "--json"], { cwd: dir, env: {} })).stdout,
    );
    expect(all.jobs).toHaveLength(4);
    expect(new Set(all.jobs.map((j) => j.service))).toEqual(new Set([a.baseUrl, b.baseUrl]));
    // Counted apart per service; `manifests` adds them up.
    expect(all.services).toEqual({
      [a.baseUrl]: { promo: { Success: 2 } },
      [b.baseUrl]: { promo: { Success: 2 } },
    });
    expect(all.manifests).toEqual({ promo: { Success: 4 } });
    // Read by a person: one block per service, not 4 jobs for a manifest of 2.
    const plain = await runCli(["status", "--state", "shared.db"], { cwd: dir, env: {} });
    expect(table(plain.stdout).trim().split("\n\n").sort()).toEqual(
      [a.baseUrl, b.baseUrl]
        .sort()
        .map((url) => expect.stringMatching(new RegExp(`^${url}:\npromo +2 jobs: 2 Success$`))),
    );

    const onA = await runCli(["status", "--state", "shared.db", "--base-url", a.baseUrl, "--json"], {
      cwd: dir,
      env: {},
    });
    expect(onA.code).toBe(0);
    const statusA = parseStatus(onA.stdout);
    expect(statusA.manifests).toEqual({ promo: { Success: 2 } });
    expect(statusA.jobs.map((j) => [j.id, j.taskId, j.service])).toEqual(
      (await readResults<StatusJob>(dir, "out-a")).map((r) => [r.id, r.taskId, a.baseUrl]),
    );

    const onB = await runCli(["status", "--state", "shared.db", "--base-url", b.baseUrl], {
      cwd: dir,
      env: {},
    });
    expect(onB.code).toBe(0);
    expect(table(onB.stdout)).toMatch(/^promo +2 jobs: 2 Success\n$/);
    const statusB = parseStatus(
      (
        await runCli(["status", "--state", "shared.db", "--base-url", b.baseUrl, "--json"], {
          cwd: dir,
          env: {},
        })
      ).stdout,
    );
    const idsB = statusB.jobs.map((j) => j.taskId);
    expect(idsB).toEqual((await readResults<StatusJob>(dir, "out-b")).map((r) => r.taskId));
    for (const id of idsB) expect(BigInt(id!)).toBeGreaterThan(2n ** 53n);

    // A service the file never saw has no jobs there; saying so is not an error.
    const other = await runCli(["status", "--state", "shared.db", "--base-url", "https://api.example.com"], {
      cwd: dir,
      env: {},
    });
    expect(other.code).toBe(0);
    expect(table(other.stdout)).toBe("No jobs recorded.\n");
    expect(requestTotal(a) + requestTotal(b)).toBe(before);
  });

  // run and plan strip trailing slashes from the base URL before recording it (service-options.ts):
  // the very URL the user ran with, written `http://127.0.0.1:PORT/`, must find its jobs.
  it("--base-url finds the jobs when written with a trailing slash, as run accepts it", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "launch.yaml": PROMO });
    const withSlash = `${s.baseUrl}/`;
    const run = await runCli(["run", "launch.yaml", "--base-url", withSlash], { cwd: dir, env: env(s) });
    expect(run.code, run.stderr).toBe(0);

    const result = await runCli(["status", "--base-url", withSlash], { cwd: dir, env: {} });
    expect(result.code).toBe(0);
    expect(table(result.stdout)).toMatch(/^promo +2 jobs: 2 Success\n$/);
  });

  it("counts an edited video once, with its latest job", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "launch.yaml": PROMO });
    expect((await runCli(["run", "launch.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    const first = await readResults<StatusJob>(dir);
    await writeFile(join(dir, "launch.yaml"), PROMO.replace('"a teaser"', '"a shorter teaser"'));
    expect((await runCli(["run", "launch.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    const second = await readResults<StatusJob>(dir);
    expect(s.counters.generationsCreated).toBe(3);

    // The old teaser job stays in the state file, but the user has two videos, not three.
    const human = await runCli(["status"], { cwd: dir, env: {} });
    expect(table(human.stdout)).toMatch(/^promo +2 jobs: 2 Success\n$/);
    const status = parseStatus((await runCli(["status", "--json"], { cwd: dir, env: {} })).stdout);
    expect(status.jobs.map((j) => [j.id, j.taskId, j.specHash])).toEqual(
      second.map((r) => [r.id, r.taskId, r.specHash]),
    );
    expect(status.jobs[0]?.taskId).not.toBe(first[0]?.taskId);
  });

  it("forgets a video removed from its manifest before anything was sent for it, instead of showing it pending for good", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "launch.yaml": PROMO });
    // --only leaves the trailer unsent: recorded as pending.
    const only = await runCli(["run", "launch.yaml", "--only", "promo/teaser"], { cwd: dir, env: env(s) });
    expect(only.code).toBe(0);
    expect((await runCli(["status"], { cwd: dir, env: {} })).stdout).toMatch(
      /^promo +2 jobs: 1 Success, 1 unsent$/m,
    );

    await writeFile(join(dir, "launch.yaml"), PROMO.slice(0, PROMO.indexOf("  - id: trailer")));
    expect((await runCli(["run", "launch.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    expect(table((await runCli(["status"], { cwd: dir, env: {} })).stdout)).toMatch(
      /^promo +1 job: 1 Success\n$/,
    );
    expect(s.counters.generationsCreated).toBe(1);
  });

  it("after a run stopped by exhausted credits, shows the unsent jobs as unsent, with the reason", async () => {
    // 5 credits pay for one 5 s video; one generation at a time, so the second is refused.
    const s = await sandbox({ credits: 5 });
    const dir = await tempDir();
    await writeTree(dir, { "manifests/shop.yaml": SHOP.replace("source: { asset: 999999 }\n    ", "") });
    const run = await runCli(["run", "manifests", "--concurrency", "1"], { cwd: dir, env: env(s) });
    expect(run.code).toBe(3);
    expect(s.counters.generationsCreated).toBe(1);

    const result = await runCli(["status"], { cwd: dir, env: {} });
    expect(result.code).toBe(0);
    expect(table(result.stdout)).toMatch(/^shop +3 jobs: .*\b2 unsent\b/m);
    expect(table(result.stdout)).toMatch(/^ {2}shop\/\w+: unsent: .*credits/m);
  });

  it("refuses a file that is not a state file in one clear line", async () => {
    const dir = await tempDir();
    await writeFile(join(dir, "notes.txt"), "shopping list\n");
    const result = await runCli(["status", "--state", "notes.txt"], { cwd: dir, env: {} });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(
      `reel status: ${join(dir, "notes.txt")} is not a reel state file (not a SQLite database). Point --state at another file, or move this one away.\n`,
    );
    expect(await readFile(join(dir, "notes.txt"), "utf8")).toBe("shopping list\n");

    // Another program's SQLite database is not an empty state either.
    const other = new Database(join(dir, "other.db"));
    other.exec("CREATE TABLE notes (text TEXT)");
    other.close();
    const foreign = await runCli(["status", "--state", "other.db"], { cwd: dir, env: {} });
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toContain("is a SQLite database of another program");
  });

  it("--sandbox shows the jobs of --sandbox runs only, one job counted as one", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, {
      "launch.yaml": PROMO,
      "one.yaml":
        "version: 1\nname: one\nvideos:\n  - id: solo\n    model: actor-2\n    resolution: 720p\n    chunks:\n      - duration: 5\n        text: alone\n",
    });
    expect((await runCli(["run", "launch.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    expect((await runCli(["run", "one.yaml", "--sandbox"], { cwd: dir, env: {} })).code).toBe(0);

    const result = await runCli(["status", "--sandbox"], { cwd: dir, env: {} });
    expect(result.code).toBe(0);
    expect(table(result.stdout)).toMatch(/^one +1 job: 1 Success\n$/);
    const both = await runCli(["status", "--sandbox", "--base-url", s.baseUrl], { cwd: dir, env: {} });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("--sandbox and --base-url exclude each other");
  });
});
