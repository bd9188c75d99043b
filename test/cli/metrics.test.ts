// `run` and `watch --metrics`: the endpoint scraped during and after the work, its counts checked
// against results.jsonl and the sandbox's own counters, its text against Prometheus' promtool, and
// a real Prometheus server scraping a watch. promtool and prometheus are Debian's packages (CI
// installs them); where they are missing outside CI, the tests that need them are skipped.
import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { useCommands, REPO, runCli, until, writeTree } from "../helpers/cli.js";
import { readResults } from "../helpers/results.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const startCommand = useCommands();

function onPath(tool: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Whether a test needing `tool` runs: always in CI (where its absence fails it), else when installed. */
function needs(tool: string): boolean {
  if (process.env.CI === "true" || onPath(tool)) return true;
  console.log(`skipped: ${tool} is not installed (apt-get install prometheus); CI runs this test`);
  return false;
}

const MANIFEST = `version: 1
name: shop
videos:
  - id: face
    model: avatar-h1
    resolution: 540p
    source: ./media/face.png
    chunks:
      - duration: 4
        speech: { voice: 17, text: "Welcome to the shop." }
  - id: voice
    model: actor-2
    resolution: 720p
    chunks:
      - duration: 5
        text: "a chef tastes the soup"
        audio: ./media/voice.wav
${Array.from(
  { length: 6 },
  (_, i) =>
    `  - id: t${i}\n    model: actor-2\n    resolution: 720p\n    chunks:\n      - duration: ${i % 2 ? 5 : 10}\n        text: "take ${i}"\n`,
).join("")}`;

async function workspace(): Promise<string> {
  const dir = await tempDir();
  await writeTree(dir, {
    "shop.yaml": MANIFEST,
    "media/face.png": { fixture: "tiny.png" },
    "media/voice.wav": { fixture: "tiny.wav" },
  });
  return dir;
}

/** One sample's value: `name{labels}` as printed (labels in the order reel prints them), or 0. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const wanted = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
    if (wanted) return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return 0;
}

function metricsUrl(stderr: string): string | undefined {
  return /metrics at (http:\/\/\S+\/metrics)/.exec(stderr)?.[1];
}

/** The address a command says it serves its metrics at, once it does (failing at once if it ended). */
async function metricsAddressOf(command: ReturnType<typeof startCommand>): Promise<string> {
  let ended = false;
  void command.exited.then(() => (ended = true));
  await until(() => metricsUrl(command.output().stderr) !== undefined || ended, "the metrics address");
  const url = metricsUrl(command.output().stderr);
  if (url === undefined) throw new Error(`no metrics address: ${command.output().stderr}`);
  return url;
}

async function scrape(url: string): Promise<string> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}

function promtoolCheck(text: string): string {
  return execFileSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
}

/** A port free now, for a server a test starts (Prometheus takes no port 0). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const children: ReturnType<typeof spawn>[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

describe("--metrics", () => {
  it("scraped during and after a run, counts what results.jsonl and the sandbox count, and passes promtool", async () => {
    const s = await sandbox({ timeScale: 0.02, slots: 8, faults: { taskFailRate: 0.25 } });
    const dir = await workspace();
    const run = startCommand(["run", "shop.yaml", "--metrics", "0", "--concurrency", "3"], {
      cwd: dir,
      env: { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey },
    });
    const url = await metricsAddressOf(run);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    // Scraped as Prometheus would, faster: every scrape until the endpoint closes.
    const scrapes: string[] = [];
    for (;;) {
      const text = await fetch(url).then(
        (response) => response.text(),
        () => undefined, // closed: the run is ending
      );
      if (text === undefined) break;
      scrapes.push(text);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await run.exited).toBe(1); // some tasks failed on purpose
    const { stderr } = run.output();
    expect(stderr).toMatch(/waiting up to \d+ s for the last scrape of the metrics/);

    // During: slots held, never more than the bound, jobs on their way.
    const during = scrapes.filter((text) => sample(text, "reel_generation_slots_in_use") > 0);
    expect(during.length).toBeGreaterThan(0);
    for (const text of scrapes) {
      expect(sample(text, "reel_generation_slots_in_use")).toBeLessThanOrEqual(3);
      expect(sample(text, "reel_generation_slots")).toBe(3);
      expect(sample(text, "reel_submissions_total")).toBeLessThanOrEqual(s.counters.generationsCreated);
    }

    // After: the last scrape, made after the run's end, holds its final counts.
    const last = scrapes.at(-1)!;
    const results = await readResults<{ status: string; seconds: number; taskId: string | null }>(dir);
    expect(results).toHaveLength(8);
    const count = (status: string): number => results.filter((r) => r.status === status).length;
    expect(count("Fail")).toBeGreaterThan(0);
    expect(sample(last, "reel_jobs", { status: "done" })).toBe(count("Success"));
    expect(sample(last, "reel_jobs", { status: "failed" })).toBe(count("Fail"));
    expect(sample(last, "reel_jobs_ended_total", { status: "done" })).toBe(count("Success"));
    expect(sample(last, "reel_jobs_ended_total", { status: "failed" })).toBe(count("Fail"));
    expect(sample(last, "reel_submissions_total")).toBe(s.counters.generationsCreated);
    expect(sample(last, "reel_submissions_total")).toBe(results.filter((r) => r.taskId !== null).length);
    expect(sample(last, "reel_spent_seconds_total")).toBe(results.reduce((sum, r) => sum + r.seconds, 0));
    expect(sample(last, "reel_polls_total")).toBe(s.counters.requestCount("GET", "/v1/generations/:id"));
    expect(sample(last, "reel_uploads_total")).toBe(s.counters.requestCount("POST", "/v1/assets", 200));
    expect(sample(last, "reel_uploads_total")).toBe(2);
    expect(sample(last, "reel_speech_total")).toBe(s.counters.requestCount("POST", "/v1/audios", 200));
    expect(sample(last, "reel_speech_total")).toBe(1);
    expect(sample(last, "reel_service_answers_total", { route: "POST /v1/generations", status: "200" })).toBe(
      s.counters.requestCount("POST", "/v1/generations", 200),
    );
    expect(sample(last, "reel_unfinished_generations")).toBe(0);
    expect(sample(last, "reel_generation_slots_in_use")).toBe(0);
    expect(sample(last, "reel_task_duration_seconds_count")).toBe(s.counters.generationsCreated);
    expect(sample(last, "reel_slot_wait_seconds_count")).toBe(s.counters.generationsCreated);
    expect(sample(last, "reel_store_call_duration_seconds_count", { call: "markSubmitting" })).toBe(
      s.counters.generationsCreated,
    );
    expect(last).toMatch(
      /^reel_runner_info\{command="run",service="http:\/\/127\.0\.0\.1:\d+",store="sqlite",host="[^"]+",pid="\d+"\} 1$/m,
    );

    if (needs("promtool")) {
      for (const text of [scrapes[0]!, during[0]!, last]) expect(promtoolCheck(text)).toBe("");
    }
  });

  it("serves a named budget's caps and what every run spent from it, read from the store at each scrape", async () => {
    const s = await sandbox({ timeScale: 0.02 });
    const dir = await tempDir();
    const videos = (name: string) =>
      `version: 1\nname: ${name}\ndefaults: { model: actor-2, resolution: 720p }\nvideos:\n${[0, 1, 2]
        .map((i) => `  - { id: v${i}, chunks: [{ duration: 5, text: "${name} ${i}" }] }\n`)
        .join("")}`;
    await writeTree(dir, { "a.yaml": videos("a"), "b.yaml": videos("b") });
    expect((await runCli(["budget", "set", "team", "--max-seconds", "40"], { cwd: dir })).code).toBe(0);
    const env = { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey };
    // An earlier run spent from it: the count is the budget's, not this runner's.
    expect((await runCli(["run", "a.yaml", "--budget", "team"], { cwd: dir, env })).code).toBe(0);
    const run = startCommand(["run", "b.yaml", "--budget", "team", "--metrics", "0"], { cwd: dir, env });
    const url = await metricsAddressOf(run);
    let last = "";
    for (;;) {
      const text = await fetch(url).then(
        (response) => response.text(),
        () => undefined,
      );
      if (text === undefined) break;
      last = text;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await run.exited).toBe(0);
    expect(sample(last, "reel_budget_spent", { budget: "team", unit: "seconds" })).toBe(30);
    expect(sample(last, "reel_budget_max", { budget: "team", unit: "seconds" })).toBe(40);
    expect(last).not.toContain('unit="credits"');
    if (needs("promtool")) expect(promtoolCheck(last)).toBe("");
  });

  it("refuses an address beyond this machine unless --metrics-public, and a port in use, before sending anything", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const env = { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey };
    const open = await runCli(["run", "shop.yaml", "--metrics", "0.0.0.0:0"], { cwd: dir, env });
    expect(open.code).toBe(2);
    expect(open.stderr).toContain(
      "--metrics 0.0.0.0:0 would serve the metrics beyond this machine; add --metrics-public to mean it",
    );
    const alone = await runCli(["run", "shop.yaml", "--metrics-public"], { cwd: dir, env });
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain("--metrics-public only applies with --metrics [HOST:]PORT");
    const bad = await runCli(["run", "shop.yaml", "--metrics", "localhost"], { cwd: dir, env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("expected --metrics to be [HOST:]PORT");

    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    try {
      const port = (taken.address() as { port: number }).port;
      const busy = await runCli(["run", "shop.yaml", "--metrics", String(port)], { cwd: dir, env });
      expect(busy.code).toBe(2);
      expect(busy.stderr).toContain(`cannot serve --metrics on 127.0.0.1:${port}: the port is in use`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
    expect(s.counters.requests.size).toBe(0);

    // Asked for: served on every interface.
    const run = startCommand(["run", "shop.yaml", "--metrics", "0.0.0.0:0", "--metrics-public"], {
      cwd: dir,
      env,
    });
    const url = await metricsAddressOf(run);
    expect(url).toMatch(/^http:\/\/0\.0\.0\.0:\d+\/metrics$/);
    expect(await scrape(url.replace("0.0.0.0", "127.0.0.1"))).toContain("reel_submissions_total");
    expect(await run.exited).toBe(0);
  });

  it("a real Prometheus scraping a watch has the submissions the sandbox counted", async () => {
    if (!needs("prometheus")) return;
    const s = await sandbox({ timeScale: 0.02 });
    const dir = await workspace();
    await mkdir(join(dir, "incoming"));
    const watch = startCommand(["watch", "incoming", "--settle", "100ms", "--metrics", "0"], {
      cwd: dir,
      env: { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey },
    });
    const target = new URL(await metricsAddressOf(watch)).host;
    const port = await freePort();
    await writeFile(
      join(dir, "prometheus.yml"),
      `global:\n  scrape_interval: 200ms\n  scrape_timeout: 200ms\nscrape_configs:\n  - job_name: reel\n    static_configs:\n      - targets: ["${target}"]\n`,
    );
    const prometheus = spawn(
      "prometheus",
      [
        `--config.file=${join(dir, "prometheus.yml")}`,
        `--storage.tsdb.path=${join(dir, "tsdb")}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: "ignore" },
    );
    children.push(prometheus);
    const api = `http://127.0.0.1:${port}`;
    const query = async (expr: string): Promise<number | undefined> => {
      const response = await fetch(`${api}/api/v1/query?query=${encodeURIComponent(expr)}`).catch(
        () => undefined,
      );
      if (!response?.ok) return undefined;
      const body = (await response.json()) as { data: { result: { value: [number, string] }[] } };
      const value = body.data.result[0]?.value[1];
      return value === undefined ? undefined : Number(value);
    };
    await until(async () => (await query('up{job="reel"}')) === 1, "Prometheus to scrape the watch", 30_000);

    await writeTree(dir, {
      "incoming/media/face.png": { fixture: "tiny.png" },
      "incoming/media/voice.wav": { fixture: "tiny.wav" },
    });
    await writeFile(join(dir, "incoming", "shop.yaml"), MANIFEST);
    await until(
      () => existsSync(join(dir, "out", "shop", "t5.mp4")) && watch.output().stderr.includes("finished"),
      "the manifest to finish",
    );
    expect(s.counters.generationsCreated).toBe(8);
    await until(
      async () => (await query("reel_submissions_total")) === s.counters.generationsCreated,
      "Prometheus to have the sandbox's submissions",
    );
    await until(
      async () =>
        (await query('reel_jobs{status="done"}')) === 8 && (await query("reel_unfinished_generations")) === 0,
      "Prometheus to have every job done",
    );
  });

  it("the alert rules of docs/operations.md pass promtool check rules and fire as they say", () => {
    if (!needs("promtool")) return;
    const rules = join(REPO, "docs", "prometheus", "reel-alerts.yml");
    const checked = execFileSync("promtool", ["check", "rules", rules], { encoding: "utf8" });
    expect(checked).toMatch(/SUCCESS: \d+ rules found/);
    const tested = execFileSync(
      "promtool",
      ["test", "rules", join(REPO, "docs", "prometheus", "reel-alerts.test.yml")],
      {
        encoding: "utf8",
      },
    );
    expect(tested).toContain("SUCCESS");
  });
});
