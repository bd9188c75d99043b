// `reel sandbox`: in-process through main(), and once as the real binary, which is what users and
// scripts run: exactly two lines on stdout, then serve until SIGTERM, then exit 0.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, test } from "vitest";
import type { CliIO } from "../../src/cli/command.js";
import { main } from "../../src/cli/main.js";
import { BIN, REPO as ROOT, writeTree } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp-dir.js";

const LINES = /^export REEL_BASE_URL=(http:\/\/127\.0\.0\.1:\d+)\nexport REEL_API_KEY=(\S+)\n$/;

function capture(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  let text = "";
  stream.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  return { stream, text: () => text };
}

/** `reel sandbox --key sk-test-key` run through main(), once it printed its two lines. */
async function startInProcess(extra: readonly string[] = []) {
  const stdout = capture();
  const stderr = capture();
  const controller = new AbortController();
  const io: CliIO = {
    stdout: stdout.stream,
    stderr: stderr.stream,
    env: {},
    cwd: ROOT,
    signal: controller.signal,
  };
  const running = main(["sandbox", "--port", "0", "--key", "sk-test-key", ...extra], io);
  while (!stdout.text().includes("REEL_API_KEY=")) await new Promise((resolve) => setTimeout(resolve, 5));
  const [, baseUrl] = LINES.exec(stdout.text()) ?? [];
  return {
    baseUrl: baseUrl!,
    stdout: stdout.text,
    stderr: stderr.text,
    stop: () => {
      controller.abort();
      return running;
    },
  };
}

describe("reel sandbox", () => {
  test("in-process: prints the two lines, serves, stops on abort", async () => {
    const sandbox = await startInProcess();
    expect(sandbox.stdout()).toMatch(LINES);
    const res = await fetch(`${sandbox.baseUrl}/v1/generations/77`, {
      headers: { authorization: "Bearer sk-test-key" },
    });
    expect(res.status).toBe(404);
    expect(await sandbox.stop()).toBe(0);
    expect(sandbox.stderr()).not.toContain("sk-test-key");
  });

  const submit = (baseUrl: string, key = "sk-test-key") =>
    fetch(`${baseUrl}/v1/generations`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "actor-2",
        resolution: "720p",
        chunks: [{ duration: 5, conditions: [{ type: "text", content: "x" }] }],
      }),
    });

  test("stderr has one readable line per request, not JSON; stdout keeps its two lines", async () => {
    const sandbox = await startInProcess();
    const created = await submit(sandbox.baseUrl);
    const { id } = (await created.json()) as { id: number };
    await fetch(`${sandbox.baseUrl}/v1/generations/${id}`, {
      headers: { authorization: "Bearer sk-test-key" },
    });
    await submit(sandbox.baseUrl, "sk-wrong-key");
    expect(await sandbox.stop()).toBe(0);
    const err = sandbox.stderr();
    expect(err).toMatch(
      /^\d\d:\d\d:\d\d {2}sandbox listening on http:\/\/127\.0\.0\.1:\d+ \(Ctrl-C to stop\)$/m,
    );
    expect(err).toMatch(
      new RegExp(
        `^\\d\\d:\\d\\d:\\d\\d {2}POST {3}/v1/generations +200 {2}task ${id}, 5 s of video {2}\\d+ ms$`,
        "m",
      ),
    );
    expect(err).toMatch(
      new RegExp(
        `^\\d\\d:\\d\\d:\\d\\d {2}GET {4}/v1/generations/${id} +200 {2}task ${id} \\w+ {2}\\d+ ms$`,
        "m",
      ),
    );
    expect(err).toMatch(/ POST {3}\/v1\/generations +401 {2}wrong key {2}\d+ ms$/m);
    expect(err).not.toContain("{");
    expect(err).not.toContain("sk-test-key");
    expect(err).not.toContain("sk-wrong-key");
    expect(sandbox.stdout()).toMatch(LINES);
  });

  test("rehearses a bad day from the command line: --p429, --fail-rate, --latency; a rate above 1 is refused", async () => {
    const sandbox = await startInProcess([
      "--p429",
      "0.5",
      "--seed",
      "3",
      "--fail-rate",
      "1",
      "--latency",
      "30",
      "--time-scale",
      "0",
    ]);
    const statuses: number[] = [];
    let id: number | undefined;
    const started = Date.now();
    for (let i = 0; i < 8; i++) {
      const res = await submit(sandbox.baseUrl);
      statuses.push(res.status);
      if (res.status === 200) id ??= ((await res.json()) as { id: number }).id;
      else expect(res.headers.get("retry-after")).toBe("1");
    }
    expect(statuses).toContain(429);
    expect(statuses).toContain(200);
    expect((Date.now() - started) / statuses.length).toBeGreaterThanOrEqual(25); // --latency 30
    let task: { status: string; failReason?: string } = { status: "PreProcessing" };
    while (task.status !== "Fail" && task.status !== "Success") {
      const res = await fetch(`${sandbox.baseUrl}/v1/generations/${id}`, {
        headers: { authorization: "Bearer sk-test-key" },
      });
      if (res.status === 200) task = (await res.json()) as typeof task;
    }
    expect(task).toMatchObject({ status: "Fail", failReason: expect.stringContaining("injected failure") });
    expect(await sandbox.stop()).toBe(0);

    const stderr = capture();
    const code = await main(["sandbox", "--p429", "2"], {
      stdout: capture().stream,
      stderr: stderr.stream,
      env: {},
      cwd: ROOT,
      signal: new AbortController().signal,
    });
    expect(code).toBe(2);
    expect(stderr.text()).toContain("--p429 expects a probability from 0 to 1, got '2'");
  });

  test("--log-level debug gives pino's JSON lines instead; --log-level warn no request lines", async () => {
    const debug = await startInProcess(["--log-level", "debug"]);
    await submit(debug.baseUrl);
    expect(await debug.stop()).toBe(0);
    const lines = debug
      .stderr()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: "sandbox request",
        method: "POST",
        route: "/v1/generations",
        status: 200,
      }),
    );
    expect(debug.stdout()).toMatch(LINES);

    const quiet = await startInProcess(["--log-level", "warn"]);
    await submit(quiet.baseUrl);
    expect(await quiet.stop()).toBe(0);
    expect(quiet.stderr()).toBe("");
  });

  test("a restart without --data-dir never hands out again the ids of the previous start", async () => {
    const startAndSubmit = async (): Promise<string> => {
      const sandbox = await startInProcess();
      const res = await fetch(`${sandbox.baseUrl}/v1/generations`, {
        method: "POST",
        headers: { authorization: "Bearer sk-test-key", "content-type": "application/json" },
        body: JSON.stringify({
          model: "actor-2",
          resolution: "720p",
          chunks: [{ duration: 5, conditions: [{ type: "text", content: "x" }] }],
        }),
      });
      const text = await res.text();
      expect(await sandbox.stop()).toBe(0);
      return /"id":\s*(\d+)/.exec(text)![1]!;
    };
    const first = await startAndSubmit();
    await new Promise((resolve) => setTimeout(resolve, 2));
    const second = await startAndSubmit();
    // A client resuming after the restart is told its task is unknown, never given another's video.
    expect(BigInt(second)).toBeGreaterThan(BigInt(first));
  });

  test(
    "its two lines pasted into a shell reach reel: a run in that shell uses the sandbox",
    { timeout: 30_000 },
    async () => {
      const sandbox = await startInProcess();
      const dir = await tempDir();
      await writeTree(dir, {
        "m.yaml": `version: 1
name: m
videos:
  - id: a
    model: actor-2
    resolution: 720p
    chunks:
      - duration: 5
        text: "a lake at dawn"
`,
      });
      // As a user pastes them: the lines fed to a shell, then reel run in that same shell. Nothing
      // of REEL_* in the shell's own environment.
      const shell = spawn("sh", ["-s"], { cwd: dir, env: { PATH: process.env.PATH ?? "" } });
      let out = "";
      let err = "";
      shell.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
      shell.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => shell.on("exit", (code) => resolve(code)));
      shell.stdin.end(`${sandbox.stdout()}"${process.execPath}" "${BIN}" run --json m.yaml\n`);
      try {
        expect(await exited, err).toBe(0);
        expect(JSON.parse(out)).toMatchObject({ ok: true, outcome: "completed", counts: { Success: 1 } });
        expect(sandbox.stderr()).toMatch(/ POST {3}\/v1\/generations +200 /);
      } finally {
        if (shell.exitCode === null) shell.kill("SIGKILL");
        expect(await sandbox.stop()).toBe(0);
      }
    },
  );

  test("bad flags exit 2 before listening", async () => {
    const stdout = capture();
    const stderr = capture();
    const io: CliIO = {
      stdout: stdout.stream,
      stderr: stderr.stream,
      env: {},
      cwd: ROOT,
      signal: new AbortController().signal,
    };
    expect(await main(["sandbox", "--port", "http"], io)).toBe(2);
    expect(await main(["sandbox", "--slots", "0"], io)).toBe(2);
    expect(stdout.text()).toBe("");
    expect(stderr.text()).toMatch(/slots/);
  });

  test("the binary prints exactly two lines and exits 0 on SIGTERM", { timeout: 30_000 }, async () => {
    const child = spawn(process.execPath, [join(ROOT, "bin/reel.js"), "sandbox", "--port", "0"], {
      cwd: ROOT,
    });
    let out = "";
    let err = "";
    child.stderr.on("data", (chunk: Buffer) => {
      err += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          if (out.split("\n").length >= 3) resolve();
        });
        void exited.then((code) => reject(new Error(`exited ${code} early: ${err}`)));
      });
      const [, baseUrl, key] = LINES.exec(out) ?? [];
      expect(out, err).toMatch(LINES);
      expect(key).toMatch(/^sk-sandbox-[0-9a-f]{32}$/);
      const res = await fetch(`${baseUrl}/v1/assets/1`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(404);
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(out).toMatch(LINES);
      expect(err).not.toContain(key ?? "");
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });
});
