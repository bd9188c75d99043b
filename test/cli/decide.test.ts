// `reel approve`, `reel reject`, `reel undecide` after real runs against the sandbox over real HTTP,
// with real state files: what a reviewer sees change, in the store (status), in results.jsonl, in
// each job's record and in index.html; refusals that change nothing; and deciding beside a real
// `reel watch` process that holds the state file.
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import type { Sandbox } from "../../src/sandbox/index.js";
import { runCli, until, useReelProcesses, writeTree } from "../helpers/cli.js";
import { readResults } from "../helpers/results.js";
import { embeddedJobs } from "../helpers/report-page.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const reel = useReelProcesses();

// Two takes of mug, one video of lamp, and ghost, whose task ends Fail (an asset the service never had).
const SHOP = `version: 1
name: shop
defaults:
  model: actor-2
  resolution: 720p
videos:
  - id: mug
    takes: 2
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

const env = (s: Sandbox, extra: Record<string, string> = {}): Record<string, string> => ({
  REEL_BASE_URL: s.baseUrl,
  REEL_API_KEY: s.apiKey,
  ...extra,
});

interface Decided {
  decision: string | null;
  reviewer: string | null;
  decidedAt: string | null;
  note: string | null;
}
type StatusJob = Decided & { manifest: string; id: string; status: string };

async function ranShop(s: Sandbox): Promise<string> {
  const dir = await tempDir();
  await writeTree(dir, { "shop.yaml": SHOP });
  const run = await runCli(["run", "shop.yaml"], { cwd: dir, env: env(s) });
  expect(run.code, run.stderr).toBe(1); // ghost failed
  return dir;
}

async function status(dir: string, s: Sandbox) {
  const result = await runCli(["status", "--json"], { cwd: dir, env: env(s) });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as {
    decisions: Record<string, Record<string, number>>;
    jobs: StatusJob[];
  };
}

const decisionOf = (jobs: readonly StatusJob[], id: string): Decided => {
  const job = jobs.find((j) => j.id === id)!;
  return { decision: job.decision, reviewer: job.reviewer, decidedAt: job.decidedAt, note: job.note };
};

describe("reel approve, reject, undecide", () => {
  it("records who decided what on each take, shown by status and, after the next run, in every output", async () => {
    const s = await sandbox();
    const dir = await ranShop(s);
    const before = Date.now();

    const approve = await runCli(["approve", "shop/mug~1", "--reviewer", "ana"], { cwd: dir, env: env(s) });
    expect(approve.code, approve.stderr).toBe(0);
    expect(approve.stdout).toBe("approved shop/mug~1\n");
    expect(approve.stderr).toMatch(/^reel approve: state .+ · out /);
    // The name from the environment; a glob without manifest; a note.
    const reject = await runCli(["reject", "mug~2", "lamp", "--note", "smile too wide"], {
      cwd: dir,
      env: env(s, { REEL_REVIEWER: "bob" }),
    });
    expect(reject.code, reject.stderr).toBe(0);
    expect(reject.stdout).toBe(
      "rejected shop/lamp: 'smile too wide'\nrejected shop/mug~2: 'smile too wide'\n",
    );

    let shown = await status(dir, s);
    expect(shown.decisions).toEqual({ shop: { approved: 1, rejected: 2, undecided: 0, retakesQueued: 0 } });
    const mug1 = decisionOf(shown.jobs, "mug~1");
    expect(mug1).toMatchObject({ decision: "approved", reviewer: "ana", note: null });
    expect(Date.parse(mug1.decidedAt!)).toBeGreaterThanOrEqual(before - 1000);
    expect(decisionOf(shown.jobs, "mug~2")).toMatchObject({
      decision: "rejected",
      reviewer: "bob",
      note: "smile too wide",
    });
    expect(decisionOf(shown.jobs, "ghost")).toEqual({
      decision: null,
      reviewer: null,
      decidedAt: null,
      note: null,
    });
    const text = await runCli(["status"], { cwd: dir, env: env(s) });
    expect(text.stdout).toMatch(
      /^shop +4 jobs: 1 Fail, 3 Success\n {2}review: 1 approved, 2 rejected, 0 undecided$/m,
    );

    // The same again changes nothing; lamp undecided again; bob approves mug~1 after ana.
    const again = await runCli(["approve", "shop/mug~1", "--reviewer", "ana"], { cwd: dir, env: env(s) });
    expect(again.stdout).toBe("shop/mug~1: already approved by ana\n");
    const undecide = await runCli(["undecide", "shop/lamp", "--reviewer", "ana", "--json"], {
      cwd: dir,
      env: env(s),
    });
    expect(undecide.code, undecide.stderr).toBe(0);
    expect(JSON.parse(undecide.stdout)).toMatchObject({
      ok: true,
      action: "undecide",
      service: s.baseUrl,
      reviewer: "ana",
      jobs: [
        {
          job: "shop/lamp",
          manifest: "shop",
          id: "lamp",
          changed: true,
          decision: null,
          reviewer: null,
          was: { decision: "rejected", reviewer: "bob", note: "smile too wide" },
        },
      ],
    });
    shown = await status(dir, s);
    expect(shown.decisions).toEqual({ shop: { approved: 1, rejected: 1, undecided: 1, retakesQueued: 0 } });

    // The next run sends nothing, and writes the decisions into results.jsonl, each job's record
    // and index.html.
    const generations = s.counters.generationsCreated;
    const run = await runCli(["run", "shop.yaml"], { cwd: dir, env: env(s) });
    expect(run.code).toBe(1);
    expect(s.counters.generationsCreated).toBe(generations);
    const results = await readResults<StatusJob>(dir);
    expect(decisionOf(results, "mug~1")).toEqual(mug1);
    expect(decisionOf(results, "mug~2")).toMatchObject({ decision: "rejected", note: "smile too wide" });
    expect(decisionOf(results, "lamp")).toEqual({
      decision: null,
      reviewer: null,
      decidedAt: null,
      note: null,
    });
    const record = JSON.parse(await readFile(join(dir, "out", "shop", "mug~2.json"), "utf8")) as Decided;
    expect(record).toMatchObject({ decision: "rejected", reviewer: "bob", note: "smile too wide" });
    const lampRecord = JSON.parse(await readFile(join(dir, "out", "shop", "lamp.json"), "utf8")) as Decided;
    expect(lampRecord).toMatchObject({ decision: null, reviewer: null, decidedAt: null, note: null });
    const page = embeddedJobs(await readFile(join(dir, "out", "index.html"), "utf8"));
    expect(page.find((job) => job.id === "mug~2")).toMatchObject({
      decision: "rejected",
      reviewer: "bob",
      note: "smile too wide",
    });
  });

  it("keeps the decisions of the folder's other videos in its reports: after a run of another manifest, and after reel forget", async () => {
    const s = await sandbox();
    const dir = await ranShop(s);
    const approve = await runCli(["approve", "shop/mug~1", "--reviewer", "ana"], { cwd: dir, env: env(s) });
    expect(approve.code, approve.stderr).toBe(0);
    await writeTree(dir, {
      "desk.yaml":
        "version: 1\nname: desk\nvideos:\n  - id: pen\n    model: actor-2\n    chunks:\n      - duration: 5\n        text: a pen\n",
    });
    const run = await runCli(["run", "desk.yaml"], { cwd: dir, env: env(s) });
    expect(run.code, run.stderr).toBe(0);
    type Row = StatusJob & { thisRun: boolean };
    const listed = await readResults<Row>(dir);
    expect(listed.map((row) => `${row.manifest}/${row.id} ${row.thisRun}`).sort()).toEqual([
      "desk/pen true",
      "shop/ghost false",
      "shop/lamp false",
      "shop/mug~1 false",
      "shop/mug~2 false",
    ]);
    expect(decisionOf(listed, "mug~1")).toMatchObject({ decision: "approved", reviewer: "ana" });
    expect(decisionOf(listed, "pen").decision).toBeNull();
    const forget = await runCli(["forget", "desk"], { cwd: dir, env: env(s) });
    expect(forget.code, forget.stderr).toBe(0);
    const left = await readResults<Row>(dir);
    expect(left.map((row) => row.manifest)).not.toContain("desk");
    expect(decisionOf(left, "mug~1")).toMatchObject({ decision: "approved", reviewer: "ana" });
    const page = embeddedJobs(await readFile(join(dir, "out", "index.html"), "utf8"));
    expect(page.find((job) => job.id === "mug~1")).toMatchObject({ decision: "approved", reviewer: "ana" });
  });

  it("refuses, changing nothing, a job that does not exist, a take without a video, or no reviewer", async () => {
    const s = await sandbox();
    const dir = await ranShop(s);
    expect(
      (await runCli(["reject", "shop/mug~2", "--reviewer", "ana"], { cwd: dir, env: env(s) })).code,
    ).toBe(0);
    const unchanged = async (): Promise<void> => {
      const shown = await status(dir, s);
      expect(shown.decisions).toEqual({ shop: { approved: 0, rejected: 1, undecided: 2, retakesQueued: 0 } });
    };

    const missing = await runCli(["approve", "shop/mug~2", "shop/nope", "--reviewer", "ana"], {
      cwd: dir,
      env: env(s),
    });
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toContain(
      "reel approve: no job matches 'shop/nope' (jobs are named manifest/id); nothing was changed",
    );
    await unchanged();

    const failed = await runCli(["approve", "shop/*", "--reviewer", "ana", "--json"], {
      cwd: dir,
      env: env(s),
    });
    expect(failed.code).toBe(2);
    expect(failed.stderr).toContain("shop/ghost (Fail): no video to approve");
    expect(JSON.parse(failed.stdout)).toMatchObject({ ok: false, error: { code: "E_USAGE" } });
    const rejectFailed = await runCli(["reject", "shop/ghost", "--reviewer", "ana"], {
      cwd: dir,
      env: env(s),
    });
    expect(rejectFailed.code).toBe(2);
    expect(rejectFailed.stderr).toContain("a failed take can be retaken: reel retake");
    await unchanged();

    // No name, and nobody at a terminal to ask.
    const nobody = await runCli(["approve", "shop/lamp"], { cwd: dir, env: env(s) });
    expect(nobody.code).toBe(2);
    expect(nobody.stderr).toContain("give --reviewer NAME or set REEL_REVIEWER");
    const blank = await runCli(["approve", "shop/lamp", "--reviewer", " "], { cwd: dir, env: env(s) });
    expect(blank.code).toBe(2);
    expect(blank.stderr).toContain("--reviewer is empty");
    const none = await runCli(["approve", "--reviewer", "ana"], { cwd: dir, env: env(s) });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("name the jobs: reel approve MANIFEST/ID...");
    await unchanged();

    // No state here at all.
    const empty = await tempDir();
    const nothing = await runCli(["approve", "shop/lamp", "--reviewer", "ana"], { cwd: empty, env: env(s) });
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toMatch(/no state file at .+: nothing has run here yet/);
    expect(existsSync(join(empty, ".reel"))).toBe(false);
  });

  it("asks a person at a terminal for their name", async () => {
    const s = await sandbox();
    const dir = await ranShop(s);
    const stdin = Object.assign(new PassThrough(), { isTTY: true });
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = "";
    let err = "";
    stdout.on("data", (d: Buffer) => (out += d.toString()));
    stderr.on("data", (d: Buffer) => (err += d.toString()));
    const code = main(["approve", "shop/lamp"], {
      stdin,
      stdout,
      stderr,
      env: env(s),
      cwd: dir,
      signal: new AbortController().signal,
    });
    await until(() => err.includes("your name"), "the question");
    stdin.write("Ana Lima\n");
    expect(await code).toBe(0);
    expect(out).toBe("approved shop/lamp\n");
    expect(decisionOf((await status(dir, s)).jobs, "lamp")).toMatchObject({ reviewer: "Ana Lima" });
  });

  it("acts on the one service the state knows, and refuses to guess among several", async () => {
    const s = await sandbox();
    const other = await sandbox();
    const dir = await ranShop(s);
    // Without REEL_BASE_URL: the state knows one service.
    const one = await runCli(["approve", "shop/lamp", "--reviewer", "ana"], { cwd: dir, env: {} });
    expect(one.code, one.stderr).toBe(0);
    await writeTree(dir, {
      "promo.yaml": SHOP.replace("name: shop", "name: promo").replace(/ {2}- id: ghost[^]*$/, ""),
    });
    const promo = await runCli(["run", "promo.yaml"], { cwd: dir, env: env(other) });
    expect(promo.code, promo.stderr).toBe(0);
    const two = await runCli(["approve", "shop/mug~1", "--reviewer", "ana"], { cwd: dir, env: {} });
    expect(two.code).toBe(2);
    const both = [s.baseUrl, other.baseUrl].sort().map((url) => `--base-url ${url}`);
    expect(two.stderr).toContain(`has jobs of 2 services; name one: ${both.join(", ")}`);
    const named = await runCli(["approve", "*/mug~1", "--reviewer", "ana", "--base-url", other.baseUrl], {
      cwd: dir,
      env: {},
    });
    expect(named.code, named.stderr).toBe(0);
    // Only the jobs of the service named: promo's mug~1, not shop's.
    expect(named.stdout).toBe("approved promo/mug~1\n");
    const sandboxed = await runCli(["approve", "shop/lamp", "--reviewer", "ana", "--sandbox"], {
      cwd: dir,
      env: {},
    });
    expect(sandboxed.code).toBe(2);
    expect(sandboxed.stderr).toContain("has no jobs of sandbox:local");
  });

  it("decides beside a reel watch that holds the state file, and the watch writes the decision out", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "incoming/shop.yaml": SHOP });
    const watch = reel(["watch", "incoming", "--settle", "100ms"], dir, env(s));
    await until(async () => {
      if (!existsSync(join(dir, "out", "results.jsonl"))) return false;
      const lines = await readResults<StatusJob>(dir);
      return lines.length === 4 && lines.every((line) => line.status === "Success" || line.status === "Fail");
    }, "the watch to make shop's videos");
    // The watch holds the state file: a run is refused, a decision is not.
    const run = await runCli(["run", "incoming/shop.yaml"], { cwd: dir, env: env(s) });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("another reel process");
    const approve = await runCli(["approve", "shop/mug~2", "--reviewer", "ana"], { cwd: dir, env: env(s) });
    expect(approve.code, approve.stderr).toBe(0);
    await until(async () => {
      const lines = await readResults<StatusJob>(dir);
      return lines.find((line) => line.id === "mug~2")?.decision === "approved";
    }, "the watch to write the decision into results.jsonl");
    await until(async () => {
      const record = JSON.parse(await readFile(join(dir, "out", "shop", "mug~2.json"), "utf8")) as Decided;
      return record.decision === "approved";
    }, "the watch to write the decision into the job's record");
    // And it goes on watching: an edit is still run.
    await writeFile(join(dir, "incoming", "shop.yaml"), SHOP.replace("a lamp turns on", "a lamp turns off"));
    await until(async () => {
      const lines = await readResults<StatusJob>(dir);
      return (
        lines.some((line) => line.id === "lamp" && line.status === "Success" && line.decision === null) &&
        (await readFile(join(dir, "out", "shop", "lamp.json"), "utf8")).includes("turns off")
      );
    }, "the edited lamp");
    watch.child.kill("SIGINT");
    expect(await watch.exit).toBe(0);
  });
});
