// Notifications (--notify, REEL_NOTIFY, notify: in reel.yaml, --on-end): real receivers on 127.0.0.1
// (node:http), a real sandbox over HTTP, the CLI's run and watch.
import { createHmac } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import type { StreamEvent } from "../../src/events/types.js";
import { runCli, until, useCommands, useReelProcesses, writeTree } from "../helpers/cli.js";
import { usePostgres } from "../helpers/postgres.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const command = useCommands();
const database = usePostgres();
const reel = useReelProcesses();

interface Received {
  readonly raw: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: { text: string; type: string; [field: string]: unknown };
  readonly at: number;
}

interface Receiver {
  readonly url: string;
  readonly messages: Received[];
  /** Requests received, answered or not. */
  requests: number;
}

const receivers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((close) => close()));
});

/** A webhook receiver: answers `status`, or never when `hang`; keeps every body it was sent. */
async function receiver(answer: { status?: number; hang?: boolean } = {}): Promise<Receiver> {
  const held: ServerResponse[] = [];
  const state: Receiver = { url: "", messages: [], requests: 0 };
  const server = createServer((req, res) => {
    state.requests++;
    let raw = "";
    req.on("data", (d: Buffer) => (raw += d.toString()));
    req.on("end", () => {
      if (answer.hang) {
        held.push(res);
        return;
      }
      const status = answer.status ?? 200;
      if (status < 300) {
        state.messages.push({
          raw,
          headers: req.headers,
          body: JSON.parse(raw) as Received["body"],
          at: Date.now(),
        });
      }
      res.writeHead(status).end(status < 300 ? "ok" : "no");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  Object.assign(state, { url: `http://127.0.0.1:${port}/hooks/T000/secret-path` });
  receivers.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return state;
}

function manifest(name: string, count: number, seconds = 5): string {
  const videos = Array.from(
    { length: count },
    (_, i) => `  - id: v${i}\n    chunks:\n      - duration: ${seconds}\n        text: "take ${i}"\n`,
  ).join("");
  return `version: 1\nname: ${name}\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${videos}`;
}

const env = (s: Sandbox, extra: Record<string, string> = {}): Record<string, string> => ({
  PATH: process.env.PATH ?? "",
  REEL_BASE_URL: s.baseUrl,
  REEL_API_KEY: s.apiKey,
  ...extra,
});

const ofType = (r: Receiver, type: string): Received[] => r.messages.filter((m) => m.body.type === type);

function events(text: string): StreamEvent[] {
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as StreamEvent);
}

describe("notifications", () => {
  it("a run posts one signed message when it ends, with its outcome and counts, and never the key", async () => {
    const s = await sandbox();
    const hook = await receiver();
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": manifest("promo", 3) });
    const secret = "shared-secret-of-the-team";
    const run = await runCli(["run", "promo.yaml", "--notify", hook.url], {
      cwd: dir,
      env: env(s, { REEL_NOTIFY_SECRET: secret }),
    });
    expect(run.code, run.stderr).toBe(0);

    const ended = ofType(hook, "run.ended");
    expect(ended).toHaveLength(1);
    const message = ended[0]!;
    const expected = `sha256=${createHmac("sha256", secret).update(message.raw).digest("hex")}`;
    expect(message.headers["x-reel-signature"]).toBe(expected);
    expect(message.headers["content-type"]).toBe("application/json");
    expect(message.body).toMatchObject({
      type: "run.ended",
      outcome: "completed",
      exitCode: 0,
      counts: { done: 3, failed: 0, uncertain: 0 },
      event: { v: 1, type: "run.ended", command: "run", outcome: "completed", exitCode: 0 },
    });
    expect(message.body.text).toMatch(
      /^reel run on .+ completed \(exit 0\): 3 videos made, 0 failed, 0 uncertain\.$/,
    );
    for (const m of hook.messages) {
      expect(m.raw).not.toContain(s.apiKey);
      expect(m.raw).not.toContain(secret);
    }
    // The target's path (a webhook's secret) is never printed.
    expect(run.stderr).not.toContain("secret-path");
  });

  it("failures are told together (their count and first reasons), to each URL of REEL_NOTIFY", async () => {
    const s = await sandbox({ faults: { taskFailRate: 1 } });
    const [a, b] = [await receiver(), await receiver()];
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": manifest("promo", 8) });
    const run = await runCli(["run", "promo.yaml", "--concurrency", "8"], {
      cwd: dir,
      env: env(s, { REEL_NOTIFY: `${a.url}, ${b.url}` }),
    });
    expect(run.code, run.stderr).toBe(1);
    for (const hook of [a, b]) {
      const failures = ofType(hook, "jobs.failed");
      // Batched: the first at once, the rest together (the run ends within the minute).
      expect(failures.length).toBeGreaterThanOrEqual(1);
      expect(failures.length).toBeLessThanOrEqual(2);
      expect(failures.reduce((sum, m) => sum + (m.body.count as number), 0)).toBe(8);
      const big = failures.find((m) => (m.body.count as number) > 3)!;
      expect(big.body.text).toMatch(
        /\d jobs failed or uncertain: promo\/v\d: task: injected failure \(sandbox taskFailRate\); .*; and \d more\.$/,
      );
      expect(big.body.events as StreamEvent[]).toHaveLength(3);
      expect(ofType(hook, "run.ended")[0]!.body).toMatchObject({
        outcome: "completed",
        exitCode: 1,
        counts: { done: 0, failed: 8, uncertain: 0 },
      });
      // Failures are said before the end.
      expect(hook.messages.at(-1)!.body.type).toBe("run.ended");
    }
  });

  it("on a PostgreSQL store too, a task that ended Fail is told with its reason, and never the store's password", async (context) => {
    const url = await database(context);
    const password = decodeURIComponent(new URL(url).password);
    const s = await sandbox({ faults: { taskFailRate: 1 } });
    const hook = await receiver();
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": manifest("promo", 2) });
    const run = await runCli(["run", "promo.yaml", "--notify", hook.url], {
      cwd: dir,
      env: env(s, { REEL_STORE: url }),
    });
    expect(run.code, run.stderr).toBe(1);
    const failures = ofType(hook, "jobs.failed");
    expect(failures.reduce((sum, m) => sum + (m.body.count as number), 0)).toBe(2);
    expect(failures[0]!.body.text).toContain(": task: injected failure (sandbox taskFailRate)");
    expect(ofType(hook, "run.ended")[0]!.body).toMatchObject({ counts: { done: 0, failed: 2 } });
    if (password.length >= 4) for (const m of hook.messages) expect(m.raw).not.toContain(password);
  });

  it("a run stopped by the service for credits posts the stop", async () => {
    const s = await sandbox({ credits: 0 });
    const hook = await receiver();
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": manifest("promo", 2) });
    const run = await runCli(["run", "promo.yaml", "--notify", hook.url], { cwd: dir, env: env(s) });
    expect(run.code, run.stderr).toBe(3);
    const stopped = ofType(hook, "service.stopped");
    expect(stopped).toHaveLength(1);
    expect(stopped[0]!.body.text).toMatch(/^reel run on .+ stopped: .*credits.*A person is needed/i);
    expect(ofType(hook, "run.ended")[0]!.body).toMatchObject({ outcome: "fatal", exitCode: 3 });
  });

  it("the budget is told at 80% and once at 100%", async () => {
    const s = await sandbox();
    const hook = await receiver();
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": manifest("promo", 6) });
    const run = await runCli(["run", "promo.yaml", "--max-seconds", "25", "--notify", hook.url], {
      cwd: dir,
      env: env(s),
    });
    expect(run.code, run.stderr).toBe(3);
    const budget = hook.messages.filter((m) => m.body.type.startsWith("budget."));
    expect(budget.map((m) => m.body.text.replace(/^reel run on \S+: /, ""))).toEqual([
      "budget at 80%: 80% of --max-seconds 25: 20 s of video spent or on its way.",
      "budget at 100%: 100% of --max-seconds 25: 25 s of video spent or on its way.",
    ]);
    expect(ofType(hook, "run.ended")[0]!.body).toMatchObject({ outcome: "capped", counts: { done: 5 } });
  });

  it("a named budget is told at 80% and at 100% once in its life; raising it with budget set tells them again", async () => {
    const s = await sandbox({ timeScale: 0.05 });
    const hook = await receiver();
    const dir = await tempDir();
    await writeTree(dir, { "m.yaml": manifest("m", 6), "n.yaml": manifest("n", 6) });
    const budgetTexts = () =>
      hook.messages
        .filter((m) => m.body.type.startsWith("budget."))
        .map((m) => m.body.text.replace(/^reel run on \S+: /, ""));
    expect((await runCli(["budget", "set", "team", "--max-seconds", "25"], { cwd: dir })).code).toBe(0);
    const run = (file: string) =>
      runCli(["run", file, "--budget", "team", "--notify", hook.url], { cwd: dir, env: env(s) });
    const first = await run("m.yaml");
    expect(first.code, first.stderr).toBe(3);
    expect(budgetTexts()).toEqual([
      "budget at 80%: 80% of the budget 'team' (--max-seconds 25): 20 s of video spent by the runs that name it.",
      "budget at 100%: 100% of the budget 'team' (--max-seconds 25): 25 s of video spent by the runs that name it.",
    ]);
    expect(hook.messages[0]!.body).toMatchObject({
      type: "budget.threshold",
      event: { type: "budget.threshold", percent: 80, budget: "team" },
    });
    // Full: a second run is stopped at once, and nothing more is told of the budget.
    const second = await run("n.yaml");
    expect(second.code, second.stderr).toBe(3);
    expect(budgetTexts()).toHaveLength(2);
    // Raised past what was spent (25 of 55 s, under 80%): both shares are armed again.
    expect((await runCli(["budget", "set", "team", "--max-seconds", "55"], { cwd: dir })).code).toBe(0);
    const third = await run("n.yaml");
    expect(third.code, third.stderr).toBe(0);
    expect(budgetTexts().slice(2)).toEqual([
      "budget at 80%: 80% of the budget 'team' (--max-seconds 55): 45 s of video spent by the runs that name it.",
      "budget at 100%: 100% of the budget 'team' (--max-seconds 55): 55 s of video spent by the runs that name it.",
    ]);
  });

  it("on PostgreSQL, two runners sharing a named budget tell its 80% and its 100% once between them", async (context) => {
    const url = await database(context);
    const s = await sandbox({ timeScale: 0.05, slots: 8 });
    const hook = await receiver();
    const dir = await tempDir();
    // Each manifest more than the budget (60 s of 52): whichever runner is faster, both stop at it.
    await writeTree(dir, { "a.yaml": manifest("a", 12), "b.yaml": manifest("b", 12) });
    const set = await runCli(["budget", "set", "team", "--max-seconds", "52", "--store", url], { cwd: dir });
    expect(set.code, set.stderr).toBe(0);
    const runners = ["a", "b"].map((name) =>
      reel(
        [
          "run",
          `${name}.yaml`,
          "--store",
          url,
          "--budget",
          "team",
          "--concurrency",
          "3",
          "--notify",
          hook.url,
        ],
        dir,
        env(s),
      ),
    );
    for (const runner of runners) expect(await runner.exit, runner.stderr()).toBe(3);
    // Posted by two processes: in the order each posted, sorted here by the share.
    const told = hook.messages
      .filter((m) => m.body.type.startsWith("budget."))
      .sort(
        (x, y) => ((x.body.event as StreamEvent).percent ?? 0) - ((y.body.event as StreamEvent).percent ?? 0),
      );
    expect(told.map((m) => [m.body.type, (m.body.event as StreamEvent).percent])).toEqual([
      ["budget.threshold", 80],
      ["budget.threshold", 100],
    ]);
    // 5 s jobs: 50 s is spent at most, 2 s short of the cap; the 100% is the first claim it refused.
    expect(told[1]!.body.text).toMatch(
      /^reel run on \S+: budget at 100%: the budget 'team' \(--max-seconds 52\) has no room for the next job \(5 s of video\): 50 s of video spent by the runs that name it\.$/,
    );
    expect(ofType(hook, "run.ended")).toHaveLength(2);
  });

  it("receivers that answer 500 or hang slow neither the run nor its exit; the failing one is said once", async () => {
    const s = await sandbox({ faults: { taskFailRate: 0.5 } });
    const [failing, hanging] = [await receiver({ status: 500 }), await receiver({ hang: true })];
    const dir = await tempDir();
    await writeTree(dir, { "a.yaml": manifest("a", 24), "b.yaml": manifest("b", 24) });
    const timed = async (file: string, extra: string[]) => {
      const started = Date.now();
      const run = await runCli(["run", file, "--concurrency", "8", "--events", `${file}.jsonl`, ...extra], {
        cwd: dir,
        env: env(s),
      });
      const exited = Date.now();
      const stream = events(await readFile(join(dir, `${file}.jsonl`), "utf8"));
      const end = Date.parse(stream.find((e) => e.type === "run.ended")!.time);
      return { run, started, exited, end, runMs: end - Date.parse(stream[0]!.time) };
    };
    const without = await timed("a.yaml", []);
    const withNotify = await timed("b.yaml", ["--notify", failing.url, "--notify", hanging.url]);
    expect(without.run.code, without.run.stderr).toBe(1);
    expect(withNotify.run.code, withNotify.run.stderr).toBe(1);
    // Failures and the end were posted to both, and answered with 500 or nothing.
    expect(failing.requests).toBeGreaterThanOrEqual(2);
    expect(hanging.requests).toBeGreaterThanOrEqual(1);
    // The same work, side by side: a post on the run's path would cost seconds (10 s per hung post).
    expect(withNotify.runMs).toBeLessThan(without.runMs + 1_500);
    // At exit, at most a second for what is still on its way.
    expect(withNotify.exited - withNotify.end).toBeLessThan(2_000);
    const said = withNotify.run.stderr.split("\n").filter((line) => line.includes("notifications to "));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^reel run: notifications to http:\/\/127\.0\.0\.1:\d+ fail \(HTTP 500\)/);
  });

  it("notify: in reel.yaml at a loopback address is refused without --allow-private-notify (exit 2, nothing sent), and on-end: is never read from it", async () => {
    const s = await sandbox();
    const hook = await receiver();
    const dir = await tempDir();
    await writeTree(dir, {
      "reel.yaml": `version: 1\nnotify: ${hook.url}\n`,
      "promo.yaml": manifest("promo", 2),
    });
    const refused = await runCli(["run", "promo.yaml"], { cwd: dir, env: env(s) });
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain("--allow-private-notify");
    expect(refused.stderr).not.toContain("secret-path");
    expect(s.counters.generationsCreated).toBe(0);
    expect(hook.requests).toBe(0);

    const allowed = await runCli(["run", "promo.yaml", "--allow-private-notify"], { cwd: dir, env: env(s) });
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(ofType(hook, "run.ended")).toHaveLength(1);

    await writeFile(join(dir, "reel.yaml"), `version: 1\non-end: touch pwned\n`);
    const onEnd = await runCli(["run", "promo.yaml"], { cwd: dir, env: env(s) });
    expect(onEnd.code).toBe(2);
    expect(onEnd.stderr).toContain("must not run commands; give --on-end CMD or REEL_ON_END");
  });

  it("--on-end runs with the outcome in its environment; its failure is said and leaves the exit code", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": manifest("promo", 2) });
    const run = await runCli(
      [
        "run",
        "promo.yaml",
        "--on-end",
        'echo "$REEL_COMMAND $REEL_OUTCOME $REEL_EXIT_CODE $REEL_DONE $REEL_FAILED" > ended.txt; exit 4',
      ],
      { cwd: dir, env: env(s) },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(await readFile(join(dir, "ended.txt"), "utf8")).toBe("run completed 0 2 0\n");
    expect(run.stderr).toContain("reel run: --on-end failed (exit 4); reel's exit code is unchanged");
  });

  it("a watch tells each manifest that finished, and its own end", async () => {
    const s = await sandbox();
    const hook = await receiver();
    const dir = await tempDir();
    await writeTree(dir, { "in/.keep": "" });
    const watch = command(["watch", "in", "--settle", "50ms", "--notify", hook.url], {
      cwd: dir,
      env: env(s),
    });
    await writeFile(join(dir, "in", "promo.yaml"), manifest("promo", 2));
    await until(() => ofType(hook, "manifest.finished").length > 0, "manifest.finished posted");
    expect(ofType(hook, "manifest.finished")[0]!.body.text).toMatch(
      /^reel watch on .+: promo finished: 2 Success\.$/,
    );
    const stopped = await watch.stop();
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(ofType(hook, "run.ended")[0]!.body).toMatchObject({ outcome: "stopped", counts: { done: 2 } });
  });
});
