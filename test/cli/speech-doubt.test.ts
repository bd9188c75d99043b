// A job not sent because its speech was in doubt (a speech call perhaps paid for, its answer not
// recorded) is uncertain for that alone: once the speech is known, a plain run sends it, with the
// speech on record (not made again). A job whose own submission may have been sent stays uncertain.
// On a state file (a speech remade by --resubmit-uncertain for one job, then shared by another) and
// in a fleet (a runner paused during a shared speech, taken over, then recording the speech late).
import { existsSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { expect, it } from "vitest";
import { runCli, until, useReelProcesses, writeTree } from "../helpers/cli.js";
import { useHostileServers } from "../helpers/hostile-server.js";
import { usePostgres } from "../helpers/postgres.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const hostile = useHostileServers();
const database = usePostgres();
const reel = useReelProcesses();

/** A video of actor-4 speaking `line` (voice `voice`). */
const speaking = (id: string, voice: number, line: string): string =>
  `  - id: ${id}\n    model: actor-4\n    resolution: 540p\n    chunks:\n      - duration: 5\n        text: "${id}"\n        speech: { voice: ${voice}, text: "${line}" }\n`;

it("on a state file: a job in doubt for its speech alone is sent by a plain run once that speech is made; one whose submission may have been sent is not", async () => {
  const s = await sandbox();
  const dir = await tempDir();
  const text = `  - id: d\n    model: actor-2\n    resolution: 720p\n    chunks:\n      - duration: 5\n        text: "d"\n`;
  await writeTree(dir, {
    "m.yaml": `version: 1\nname: m\nvideos:\n${speaking("a", 17, "shared")}${speaking("b", 17, "shared")}${speaking("c", 18, "alone")}${text}`,
  });
  const env = { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey };
  const speechCalls = () => s.counters.requestCount("POST", "/v1/audios");

  // Every speech call and submission takes effect and then answers 500: both speeches (one shared
  // by a and b) and d's task are made, their answers unknown.
  s.setFaults({ rate500AfterEffect: 1, routes: ["POST /v1/audios", "POST /v1/generations"] });
  const first = await runCli(["run", "m.yaml"], { cwd: dir, env });
  expect(first.code, first.stderr).toBe(1);
  expect(speechCalls()).toBe(2);
  expect(s.counters.generationsCreated).toBe(1);

  // a's speech made again on request (--resubmit-uncertain), a sent.
  s.setFaults(undefined);
  const second = await runCli(["run", "m.yaml", "--resubmit-uncertain", "--only", "m/a"], { cwd: dir, env });
  expect(second.code, second.stderr).toBe(0);
  expect(speechCalls()).toBe(3);
  expect(s.counters.generationsCreated).toBe(2);

  // b shares that speech: a plain run sends b (its speech not made again); c's speech is still in
  // doubt and d's submission may have made a task: both stay uncertain, nothing sent for them.
  const plan = await runCli(["plan", "m.yaml"], { cwd: dir, env });
  expect(plan.stdout).toContain("jobs       1 new, 1 done, 0 in flight, 0 failed, 2 uncertain");
  const explained = await runCli(["plan", "m.yaml", "--explain"], { cwd: dir, env });
  expect(explained.stdout).toMatch(
    /m\/b: failed before anything was sent \(POST \/v1\/audios: outcome unknown.*Nothing was sent for this video/,
  );
  const third = await runCli(["run", "m.yaml"], { cwd: dir, env });
  expect(third.code, third.stderr).toBe(1);
  expect(speechCalls()).toBe(3);
  expect(s.counters.generationsCreated).toBe(3);
  expect(s.counters.duplicateGenerations()).toBe(0);
  expect(existsSync(join(dir, "out", "m", "b.mp4"))).toBe(true);
  expect(existsSync(join(dir, "out", "m", "c.mp4"))).toBe(false);
  expect(existsSync(join(dir, "out", "m", "d.mp4"))).toBe(false);
  expect(third.stderr).toMatch(/uncertain.*\n?.*--resubmit-uncertain/);
});

it("in a fleet: a runner paused while making a shared speech is taken over, its jobs left uncertain; the speech it records on waking lets a plain run send them", async (context) => {
  const url = await database(context);
  const s = await sandbox();
  // In front of the sandbox, holding the answer to the speech call until the test lets it go.
  let speechArrived = false;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const front = await hostile(async (req, res) => {
    const upstream = await fetch(`${s.baseUrl}${req.url}`, {
      method: req.method,
      headers: Object.fromEntries(
        ["authorization", "content-type"].flatMap((h) =>
          typeof req.headers[h] === "string" ? [[h, req.headers[h]]] : [],
        ),
      ),
      ...(req.method === "GET" ? {} : { body: req.body }),
    });
    const type = upstream.headers.get("content-type") ?? "";
    let body = Buffer.from(await upstream.arrayBuffer());
    // The videos' addresses through the front too: reel fetches http only from the service's host.
    if (type.includes("json")) body = Buffer.from(body.toString().replaceAll(s.baseUrl, front.baseUrl));
    if (req.method === "POST" && req.url.startsWith("/v1/audios")) {
      speechArrived = true;
      await released;
    }
    res.writeHead(upstream.status, { "content-type": type });
    res.end(body);
  });
  const dir = await tempDir();
  const videos = Array.from({ length: 6 }, (_, i) => speaking(`v${i}`, 17, "shared line")).join("");
  await writeTree(dir, { "m.yaml": `version: 1\nname: m\nvideos:\n${videos}` });
  const env = {
    REEL_BASE_URL: front.baseUrl,
    REEL_API_KEY: s.apiKey,
    REEL_STORE: url,
    REEL_LEASE_SECONDS: "1",
  };
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const count = async (sql: string): Promise<number> =>
      Number((await db.query<{ n: string }>(sql)).rows[0]!.n);

    // A sends the speech call, and is paused (SIGSTOP) while its answer is held.
    const a = reel(["run", "m.yaml"], dir, env);
    await until(() => speechArrived, "A's speech call");
    a.child.kill("SIGSTOP");
    // B takes A over past its lease: the speech is uncertain, and so are the 6 jobs that need it.
    const b = await runCli(["run", "m.yaml"], { cwd: dir, env });
    expect(b.code, b.stderr).toBe(1);
    expect(await count("SELECT count(*) AS n FROM jobs WHERE state = 'uncertain'")).toBe(6);
    // A wakes with the speech's answer: recorded, then it finds itself taken over and stops.
    release();
    a.child.kill("SIGCONT");
    await a.exit;
    expect(await count("SELECT count(*) AS n FROM speech WHERE state = 'done'")).toBe(1);
    expect(s.counters.generationsCreated).toBe(0);

    // Nothing of the 6 was sent: a plain run sends them, the speech not made again.
    const rerun = await runCli(["run", "m.yaml"], { cwd: dir, env });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(s.counters.generationsCreated).toBe(6);
    expect(s.counters.requestCount("POST", "/v1/audios")).toBe(1);
    expect(await count("SELECT count(*) AS n FROM jobs WHERE state = 'Success'")).toBe(6);
  } finally {
    await db.end();
  }
});
