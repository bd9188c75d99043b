// `reel run` end to end against the sandbox over real HTTP, with a real state file and output folder:
// what users are promised (each video once, each credit intended, nothing lost).
import { existsSync } from "node:fs";
import { lstat, mkdir, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { makeClient } from "../../src/client/index.js";
import { StateStore } from "../../src/state/sqlite/store.js";
import type { Sandbox } from "../../src/sandbox/index.js";
import { runCli, useCommands, until, writeTree } from "../helpers/cli.js";
import { failDownloadRecords } from "../helpers/state-faults.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { readResults } from "../helpers/results.js";
import { tempDir } from "../helpers/temp-dir.js";
import { expectServedVideo } from "../helpers/videos.js";

const sandbox = useSandboxes();
// Stopped after each test, before the sandboxes close.
const startCommand = useCommands();

const ALPHA = `version: 1
name: alpha
defaults:
  aspectRatio: "16:9"
videos:
  - id: a1
    model: actor-1
    resolution: 720p
    source: ./media/face.png
    chunks:
      - duration: 5
        text: "a presenter waves"
  - id: a2
    model: actor-2
    resolution: 1080p
    chunks:
      - duration: 10
        text: "a chef tastes the soup"
        audio: ./media/voice.wav
  - id: a4
    model: actor-4
    resolution: 540p
    chunks:
      - duration: 5
        text: "a cat on a sofa"
  - id: h1
    model: avatar-h1
    resolution: 540p
    aspectRatio: "1:1"
    source: ./media/face-copy.png
    chunks:
      - duration: 4
        speech: { voice: 17, text: "Welcome to the spring collection." }
  - id: h1p
    model: avatar-h1-pro
    resolution: 720p
    source: ./media/face.png
    chunks:
      - duration: 3
        text: "smiles"
        audio: ./media/voice.wav
`;

const BETA = `version: 1
name: beta
videos:
  - id: again
    model: avatar-h1
    resolution: 540p
    source: ./media/face.png
    chunks:
      - duration: 2
        speech: { voice: 17, text: "Welcome to the spring collection." }
`;

async function workspace(): Promise<string> {
  const dir = await tempDir();
  await writeTree(dir, {
    "manifests/alpha.yaml": ALPHA,
    "manifests/beta.yaml": BETA,
    "manifests/media/face.png": { fixture: "tiny.png" },
    "manifests/media/face-copy.png": { fixture: "tiny.png" },
    "manifests/media/voice.wav": { fixture: "tiny.wav" },
  });
  return dir;
}

/** `count` text-only actor-2 videos of 5 or 10 seconds, in a manifest named `many`. */
function manyManifest(count: number): string {
  const videos = Array.from(
    { length: count },
    (_, i) => `  - id: v${i}\n    chunks:\n      - duration: ${i % 2 ? 5 : 10}\n        text: "take ${i}"\n`,
  ).join("");
  return `version: 1\nname: many\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${videos}`;
}

function env(s: Sandbox, extra: Record<string, string> = {}): Record<string, string> {
  return { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey, ...extra };
}

/** Runs `manifest` and interrupts it (Ctrl-C, exit 130) once its first task is on the service. */
async function interruptOnceSubmitted(s: Sandbox, dir: string, manifest: string): Promise<void> {
  const interrupt = new AbortController();
  const running = runCli(["run", manifest], { cwd: dir, env: env(s), signal: interrupt.signal });
  while (s.counters.generationsCreated < 1) await sleep(10);
  interrupt.abort();
  expect((await running).code).toBe(130);
}

/** Deletes on the service every asset the state file says reel uploaded (a user in the console). */
async function deleteUploadedAssets(s: Sandbox, dir: string): Promise<string[]> {
  const db = new Database(join(dir, ".reel", "state.db"), { readonly: true });
  const ids = (db.prepare("SELECT asset_id FROM assets").all() as { asset_id: string }[]).map(
    (r) => r.asset_id,
  );
  db.close();
  const client = makeClient({ baseUrl: s.baseUrl, apiKey: s.apiKey });
  for (const id of ids) await client.deleteAsset(id);
  await client.close();
  return ids;
}

const WRITES = ["POST /v1/generations", "POST /v1/assets", "POST /v1/audios"] as const;
function writeCalls(s: Sandbox): number {
  return WRITES.reduce((sum, w) => {
    const [method, route] = w.split(" ") as [string, string];
    return sum + s.counters.requestCount(method, route);
  }, 0);
}

describe("reel run", () => {
  it("runs every model once, uploads each content once, makes speech once; a second run sends nothing", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const first = await runCli(["run", "manifests"], { cwd: dir, env: env(s) });
    expect(first.stderr).toContain("completed");
    expect(first.code).toBe(0);
    // Uploads and speech are named as the manifests name them, not by hash alone.
    expect(first.stderr).toMatch(/uploaded +\S*manifests\/media\/voice\.wav \(sha256 [0-9a-f]{12}\)\n/);
    expect(first.stderr).toMatch(/speech +voice \d+: ".+"\n/);

    expect(s.counters.generationsCreated).toBe(6);
    expect(s.counters.duplicateGenerations()).toBe(0);
    // face.png and face-copy.png have one content; voice.wav another: two uploads in all.
    expect(s.counters.uploadsByHash.size).toBe(2);
    expect(s.counters.duplicateUploads()).toBe(0);
    expect(s.counters.requestCount("POST", "/v1/assets")).toBe(2);
    expect(s.counters.requestCount("POST", "/v1/audios")).toBe(1);

    const results = await readResults(dir);
    expect(results).toHaveLength(6);
    for (const r of results) {
      expect(r.status).toBe("Success");
      expect(r.error).toBeNull();
      await expectServedVideo(join(dir, "out", String(r.file)));
      const record = JSON.parse(await readFile(join(dir, "out", `${r.manifest}/${r.id}.json`), "utf8"));
      expect(record.taskId).toBe(r.taskId);
    }
    expect((await readdir(join(dir, "out", "alpha"))).filter((f) => f.endsWith(".part"))).toEqual([]);

    // plan now reads the state: everything done, every upload and speech cached, no call made.
    const requestsBefore = [...s.counters.requests.values()].reduce((a, b) => a + b, 0);
    const plan = await runCli(["plan", "manifests", "--json"], { cwd: dir, env: env(s) });
    expect(plan.code).toBe(0);
    const planned = JSON.parse(plan.stdout).plan;
    expect(JSON.parse(plan.stdout).service).toBe(s.baseUrl);
    expect(planned.jobs.done).toHaveLength(6);
    expect(planned.jobs.new).toHaveLength(0);
    expect(planned.uploads.new).toHaveLength(0);
    expect(planned.speech.new).toHaveLength(0);
    expect([...s.counters.requests.values()].reduce((a, b) => a + b, 0)).toBe(requestsBefore);
    // Without REEL_BASE_URL, the service the state file used last, named.
    const humanPlan = await runCli(["plan", "manifests"], { cwd: dir });
    expect(humanPlan.stdout).toContain(`compared with: what the state file records of ${s.baseUrl}\n`);
    expect(humanPlan.stdout.split("\n")[0]).toBe(
      "state .reel/state.db · out out · found above the manifests",
    );
    expect(humanPlan.stdout).toContain("jobs       0 new, 6 done");

    const writesBefore = writeCalls(s);
    const second = await runCli(["run", "manifests"], { cwd: dir, env: env(s) });
    expect(second.code).toBe(0);
    expect(writeCalls(s)).toBe(writesBefore);
    expect(s.counters.generationsCreated).toBe(6);
  });

  it("says, in plan and at the start of a run, that a renamed manifest's videos are new and paid again", async () => {
    const s = await sandbox();
    const dir = await workspace();
    expect((await runCli(["run", "manifests/beta.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    // The same videos under a new manifest name (the file copied, its name: line changed).
    await writeFile(join(dir, "manifests", "beta-2.yaml"), BETA.replace("name: beta", "name: beta-2"));

    const plan = await runCli(["plan", "manifests/beta-2.yaml"], { cwd: dir, env: env(s) });
    expect(plan.stdout).toContain("1 of the new jobs repeat a video already made under another name");
    expect(plan.stdout).toContain("  beta-2/again (made as beta/again)");
    const json = JSON.parse(
      (await runCli(["plan", "manifests/beta-2.yaml", "--json"], { cwd: dir, env: env(s) })).stdout,
    ) as { plan: { repeats: unknown } };
    expect(json.plan.repeats).toEqual([{ key: "beta-2/again", sameAs: "beta/again" }]);
    // Unchanged manifests repeat nothing.
    const same = await runCli(["plan", "manifests/beta.yaml"], { cwd: dir, env: env(s) });
    expect(same.stdout).not.toContain("repeat");

    const run = await runCli(["run", "manifests/beta-2.yaml"], { cwd: dir, env: env(s) });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(
      "1 new job repeats a video already made under another name (beta-2/again = beta/again): it is generated and paid for again",
    );
    expect(s.counters.generationsCreated).toBe(2);
    // Once made under its new name, it is no longer new: no note.
    const again = await runCli(["run", "manifests/beta-2.yaml"], { cwd: dir, env: env(s) });
    expect(again.stderr).not.toContain("repeat");
  });

  it("downloads a deleted video again from its task, without a new generation", async () => {
    const s = await sandbox();
    const dir = await workspace();
    expect((await runCli(["run", "manifests/beta.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    await rm(join(dir, "out", "beta", "again.mp4"));
    expect((await runCli(["run", "manifests/beta.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    expect(s.counters.generationsCreated).toBe(1);
    await expectServedVideo(join(dir, "out", "beta", "again.mp4"));
  });

  it("asks the service for the task again when the result address expired before the download", async () => {
    // Tasks end at once; each download waits 400 ms in the server before it is answered.
    const s = await sandbox({ timeScale: 0, preProcessingMs: 0 });
    s.setFaults({ latencyMs: 400, routes: ["GET /files/:token"] });
    const dir = await tempDir();
    await writeTree(dir, { "m.yaml": manyManifest(1) });
    const running = runCli(["run", "m.yaml"], { cwd: dir, env: env(s) });
    // The first status query already says Success: the address it gave expires while fetched.
    while (!s.counters.requests.get("GET /v1/generations/:id 200")) await sleep(5);
    s.expireFileUrls();
    const result = await running;
    expect(result.code, result.stderr).toBe(0);
    expect(s.counters.requests.get("GET /files/:token 403")).toBe(1);
    expect(s.counters.requests.get("GET /v1/generations/:id 200")).toBe(2);
    expect(s.counters.generationsCreated).toBe(1);
    await expectServedVideo(join(dir, "out", "many", "v0.mp4"));
  });

  it("with --sandbox, downloads a deleted video again although the emulator now has another address", async () => {
    const dir = await tempDir();
    await writeTree(dir, { "m.yaml": manyManifest(2) });
    expect((await runCli(["run", "m.yaml", "--sandbox"], { cwd: dir, env: {} })).code).toBe(0);
    await rm(join(dir, "out", "many", "v0.mp4"));
    // The address in the state file names the previous run's port: the task is asked for again.
    const again = await runCli(["run", "m.yaml", "--sandbox"], { cwd: dir, env: {} });
    expect(again.code, again.stderr).toBe(0);
    await expectServedVideo(join(dir, "out", "many", "v0.mp4"));
  });

  it("stops and says so when the state file cannot be written; the rerun after the fix completes", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const statePath = join(dir, ".reel", "state.db");
    await mkdir(join(dir, ".reel"), { recursive: true });
    await StateStore.open(statePath, { baseUrl: s.baseUrl }).close();
    const liftFault = failDownloadRecords(statePath);
    const failed = await runCli(["run", "manifests/beta.yaml"], { cwd: dir, env: env(s) });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(`could not write the state file ${statePath}: database or disk is full`);

    liftFault();
    const rerun = await runCli(["run", "manifests/beta.yaml"], { cwd: dir, env: env(s) });
    expect(rerun.code).toBe(0);
    expect(s.counters.generationsCreated).toBe(1);
    await expectServedVideo(join(dir, "out", "beta", "again.mp4"));
  });

  it("writes again a job record that is missing, empty or cut short, without a new generation", async () => {
    const s = await sandbox();
    const dir = await workspace();
    expect((await runCli(["run", "manifests/beta.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    const recordPath = join(dir, "out", "beta", "again.json");
    const whole = await readFile(recordPath, "utf8");
    // Records are written without fsync (they are made from the state file): what a power cut can
    // leave of one is an empty file.
    for (const damaged of ["", whole.slice(0, 40), "garbage\n"]) {
      await writeFile(recordPath, damaged);
      expect((await runCli(["run", "manifests/beta.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
      expect(await readFile(recordPath, "utf8")).toBe(whole);
    }
    expect(s.counters.generationsCreated).toBe(1);
  });

  it(
    "completes everything under 429, 503, dropped connections, latency and truncated downloads, with no duplicate",
    {
      timeout: 90_000,
    },
    async () => {
      const s = await sandbox({
        faults: {
          seed: 42,
          rate429: 0.1,
          rate503: 0.1,
          rateDrop: 0.05,
          retryAfterSeconds: 0.05,
          latencyMs: [0, 20],
          rateTruncateDownload: 0.3,
          routes: ["POST /v1/generations", "GET /v1/generations/:id", "POST /v1/assets", "GET /files/:token"],
        },
      });
      const dir = await workspace();
      await writeTree(dir, { "manifests/many.yaml": manyManifest(20) });
      // A dropped submission has an unknown outcome: those jobs are uncertain, never resubmitted blindly.
      const { code } = await runCli(["run", "manifests"], { cwd: dir, env: env(s) });
      const results = await readResults(dir);
      for (const r of results) expect(["Success", "uncertain"]).toContain(r.status);
      // The faults really happened, and most jobs still made it through them.
      for (const kind of ["429", "503", "truncated-download"] as const) {
        expect(s.counters.faultCount(kind), kind).toBeGreaterThan(0);
      }
      const uncertain = results.filter((r) => r.status === "uncertain").length;
      expect(uncertain).toBeLessThanOrEqual(
        s.counters.faultCount("drop-before-effect") + s.counters.faultCount("drop-after-effect"),
      );
      expect(s.counters.duplicateGenerations()).toBe(0);
      // Uploads cost nothing and are retried after a dropped connection: only a drop that came after
      // the upload was stored can make a second copy.
      expect(s.counters.duplicateUploads()).toBeLessThanOrEqual(s.counters.faultCount("drop-after-effect"));
      if (results.every((r) => r.status === "Success")) expect(code).toBe(0);
      else expect(code).toBe(1);
      for (const r of results.filter((r) => r.status === "Success")) {
        expect(r.file, String(r.error)).not.toBeNull();
        await expectServedVideo(join(dir, "out", String(r.file)));
      }
    },
  );

  it("marks a submission answered by an ambiguous 500 uncertain (exit 1); --resubmit-uncertain completes it", async () => {
    const s = await sandbox({ faults: { rate500AfterEffect: 1, routes: ["POST /v1/generations"] } });
    const dir = await workspace();
    const first = await runCli(["run", "manifests/beta.yaml"], { cwd: dir, env: env(s) });
    expect(first.code).toBe(1);
    expect(first.stderr).toMatch(/uncertain/);
    expect((await readResults(dir))[0]?.status).toBe("uncertain");
    expect(s.counters.generationsCreated).toBe(1);
    // Its record says so too, beside where its video would be: the job that needs a look most.
    const record = JSON.parse(await readFile(join(dir, "out", "beta", "again.json"), "utf8")) as object;
    expect(record).toMatchObject({
      status: "uncertain",
      taskId: null,
      error: expect.stringMatching(/outcome/),
    });

    // A plain rerun does not resubmit it.
    expect((await runCli(["run", "manifests/beta.yaml"], { cwd: dir, env: env(s) })).code).toBe(1);
    expect(s.counters.generationsCreated).toBe(1);

    s.setFaults({});
    const third = await runCli(["run", "manifests/beta.yaml", "--resubmit-uncertain"], {
      cwd: dir,
      env: env(s),
    });
    expect(third.code).toBe(0);
    expect(s.counters.generationsCreated).toBe(2);
    expect((await readResults(dir))[0]?.status).toBe("Success");
  });

  it("after a rejected key, the rerun with the right key makes the refused speech: nothing is left uncertain", async () => {
    const s = await sandbox();
    const dir = await workspace();
    // Speech and uploads in flight together, so the first 401 may come back on either.
    const speeches = [1, 2, 3, 4, 5, 6]
      .map(
        (i) =>
          `  - id: t${i}\n    model: avatar-h1\n    resolution: 540p\n    source: ./media/face.png\n    chunks:\n      - duration: 2\n        speech: { voice: 17, text: "line ${i}" }\n`,
      )
      .join("");
    await writeTree(dir, { "manifests/talk.yaml": `version: 1\nname: talk\nvideos:\n${speeches}` });
    for (let round = 0; round < 3; round++) {
      const wrong = await runCli(["run", "manifests"], {
        cwd: dir,
        env: env(s, { REEL_API_KEY: "sk-this-key-is-wrong-0123456789abcdef" }),
      });
      expect(wrong.code).toBe(3);
    }
    const right = await runCli(["run", "manifests"], { cwd: dir, env: env(s) });
    expect(right.stderr).not.toContain("uncertain");
    expect(right.code, right.stderr).toBe(0);
    expect(s.counters.requestCount("POST", "/v1/audios")).toBeGreaterThanOrEqual(6);
  });

  it("stops at once with exit 3 on a rejected key, and the key appears nowhere", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const wrong = "sk-this-key-is-wrong-0123456789abcdef";
    const result = await runCli(["run", "manifests", "--json"], {
      cwd: dir,
      env: env(s, { REEL_API_KEY: wrong }),
    });
    expect(result.code).toBe(3);
    // --json: the reason is in the document, as every command's error is.
    const json = JSON.parse(result.stdout) as { ok: boolean; outcome: string; error: { message: string } };
    expect(json).toMatchObject({ ok: false, outcome: "fatal", error: { code: "E_AUTH" } });
    expect(json.error.message).toMatch(/rejected the API key/);
    expect(s.counters.generationsCreated).toBe(0);
    const everything = [result.stdout, result.stderr];
    for (const folder of [".reel", ".reel/logs", "out"]) {
      for (const name of await readdir(join(dir, folder)).catch(() => [] as string[])) {
        everything.push(await readFile(join(dir, folder, name), "latin1").catch(() => ""));
      }
    }
    for (const text of everything) expect(text).not.toContain(wrong);
  });

  it("says a generated video that could not be saved is not downloaded, and the rerun fetches it", async () => {
    const s = await sandbox();
    const dir = await workspace();
    await mkdir(join(dir, "out", "beta", "again.mp4"), { recursive: true }); // a folder in the way
    const first = await runCli(["run", "manifests/beta.yaml"], { cwd: dir, env: env(s) });
    expect(first.code).toBe(1);
    expect(first.stderr).toMatch(/completed\. 1 generated, not downloaded\n/);
    expect(first.stderr).toContain("Generated but not downloaded: rerun the same command to download them");
    await rm(join(dir, "out", "beta", "again.mp4"), { recursive: true });
    const second = await runCli(["run", "manifests/beta.yaml"], { cwd: dir, env: env(s) });
    expect(second.code).toBe(0);
    expect(second.stderr).toMatch(/completed\. 1 Success\n/);
    expect(s.counters.generationsCreated).toBe(1);
  });

  it("does not report refused uploads as possibly stored: the next run has no false note", async () => {
    const s = await sandbox({
      faults: { rate429: 1, retryAfterSeconds: 0, routes: ["POST /v1/assets"] },
    });
    const dir = await workspace();
    for (const round of [1, 2]) {
      const result = await runCli(["run", "manifests/beta.yaml"], { cwd: dir, env: env(s) });
      expect(result.code, `round ${round}: ${result.stderr}`).toBe(1);
      expect(result.stderr).toMatch(/rate limited \(429\)/);
      expect(result.stderr).not.toMatch(/may have reached the service/);
    }
    expect(s.counters.generationsCreated).toBe(0);
  });

  it("says that the service does not answer while it retries, instead of looking hung", async () => {
    // A port nothing listens on: every call is refused, and the client keeps trying for minutes.
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    await new Promise((r) => server.close(r));
    const dir = await workspace();
    const run = startCommand(["run", "manifests/beta.yaml"], {
      cwd: dir,
      env: { REEL_BASE_URL: `http://127.0.0.1:${port}`, REEL_API_KEY: "sk-test" },
    });
    await until(() => run.output().stderr.includes("trying again in"), "a note about the retries", 10_000);
    expect(run.output().stderr).toMatch(/ECONNREFUSED.*: trying again in [\d.]+ s \(attempt 2\)/);
    expect((await run.stop()).code).toBe(130);
  });

  it("refuses a concurrency that is not a whole number, naming where it came from, and sends nothing", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const flag = await runCli(["run", "manifests", "--concurrency", "0"], { cwd: dir, env: env(s) });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("expected --concurrency to be a whole number from 1 up, got '0'");
    const fromEnv = await runCli(["run", "manifests"], {
      cwd: dir,
      env: env(s, { REEL_CONCURRENCY: "zero" }),
    });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain("expected REEL_CONCURRENCY to be a whole number from 1 up, got 'zero'");
    expect(s.counters.requests.size).toBe(0);
  });

  it("refuses a key with a line break in it (exit 2, nothing sent), without showing the key", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const key = `${s.apiKey}\r`; // read from a file saved with Windows line endings
    const result = await runCli(["run", "manifests"], { cwd: dir, env: env(s, { REEL_API_KEY: key }) });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/REEL_API_KEY contains a line break/);
    expect(result.stderr).not.toContain(s.apiKey);
    expect(s.counters.requests.size).toBe(0);
  });

  it("refuses a base URL that holds the key or ends in /v1 (exit 2, nothing sent, the key not shown)", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const withKey = await runCli(["run", "manifests", "--base-url", `${s.baseUrl}/${s.apiKey}`], {
      cwd: dir,
      env: env(s),
    });
    expect(withKey.code).toBe(2);
    expect(withKey.stderr).toContain("--base-url contains the API key");
    expect(withKey.stderr).not.toContain(s.apiKey);
    const v1 = await runCli(["run", "manifests", "--base-url", `${s.baseUrl}/v1`], { cwd: dir, env: env(s) });
    expect(v1.code).toBe(2);
    expect(v1.stderr).toContain(
      `should not end with /v1: reel adds the /v1 of each endpoint itself (give '${s.baseUrl}')`,
    );
    expect(s.counters.requests.size).toBe(0);
    expect(existsSync(join(dir, ".reel", "state.db"))).toBe(false);
  });

  it("takes an empty REEL_OUT, REEL_STATE or REEL_CONCURRENCY for unset: the defaults, not the current folder", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "m.yaml": manyManifest(1) });
    const blank = env(s, { REEL_OUT: "", REEL_STATE: " ", REEL_CONCURRENCY: "" });
    const result = await runCli(["run", "m.yaml"], { cwd: dir, env: blank });
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(join(dir, "out", "many", "v0.mp4"))).toBe(true);
    expect(existsSync(join(dir, ".reel", "state.db"))).toBe(true);
    expect(existsSync(join(dir, "results.jsonl"))).toBe(false);
  });

  it("stops with exit 3 and says so when nothing answers at the base URL, instead of waiting on it", async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    await new Promise((r) => server.close(r)); // nothing listens there now
    const dir = await tempDir();
    await writeTree(dir, { "m.yaml": manyManifest(2) });
    const result = await runCli(["run", "m.yaml"], {
      cwd: dir,
      env: { REEL_BASE_URL: `http://127.0.0.1:${port}`, REEL_API_KEY: "k" },
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`cannot reach the service at http://127.0.0.1:${port}`);
    expect(result.stderr).toContain("Check --base-url (REEL_BASE_URL)");
    expect((await readResults(dir)).map((r) => r.status)).toEqual(["unsent", "unsent"]);
  });

  it("knows the service however its address is spelled: a rerun with another spelling sends nothing", async () => {
    const s = await sandbox();
    const dir = await workspace();
    expect((await runCli(["run", "manifests/beta.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    const created = s.counters.generationsCreated;
    const shouted = `${s.baseUrl.replace("http://", "HTTP://")}/`;
    const again = await runCli(["run", "manifests/beta.yaml"], {
      cwd: dir,
      env: env(s, { REEL_BASE_URL: shouted }),
    });
    expect(again.code).toBe(0);
    expect(again.stderr).toContain("1 job, 1 already done");
    expect(s.counters.generationsCreated).toBe(created);
  });

  it("stops paying with exit 3 when credits run out, yet collects what was paid for; after a top-up the rerun completes with no duplicate", async () => {
    const s = await sandbox({ credits: 12, timeScale: 0.05 });
    const dir = await workspace();
    const first = await runCli(["run", "manifests", "--concurrency", "2"], { cwd: dir, env: env(s) });
    expect(first.code).toBe(3);
    expect(first.stderr).toContain("reel run: stopped: out of credits.");
    expect(first.stderr).toContain("no credits left: nothing more is submitted");
    const paid = s.counters.generationsCreated;
    expect(paid).toBeGreaterThan(0);
    expect(paid).toBeLessThan(6);
    // Every video paid for is on disk: following tasks and downloading cost nothing.
    const done = (await readResults(dir)).filter((r) => r.status === "Success" && r.file !== null);
    expect(done).toHaveLength(paid);

    s.setCredits(undefined);
    const second = await runCli(["run", "manifests"], { cwd: dir, env: env(s) });
    expect(second.code).toBe(0);
    expect(s.counters.generationsCreated).toBe(6);
    expect(s.counters.duplicateGenerations()).toBe(0);
  });

  it("keeps at most --concurrency generations unfinished at once", async () => {
    const s = await sandbox({ slots: 8 });
    const dir = await tempDir();
    await writeTree(dir, { "m.yaml": manyManifest(12) });
    const result = await runCli(["run", "m.yaml", "--concurrency", "3"], { cwd: dir, env: env(s) });
    expect(result.code).toBe(0);
    expect(s.counters.generationsCreated).toBe(12);
    expect(s.counters.peakUnfinished).toBe(3);
  });

  it("refuses invalid manifests with exit 2 and sends nothing", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, {
      "bad.yaml": `version: 1\nvideos:\n  - id: x\n    model: actor-2\n    resolution: 540p\n    chunks:\n      - duration: 5\n        text: hi\n`,
    });
    const result = await runCli(["run", "bad.yaml"], { cwd: dir, env: env(s) });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/bad\.yaml:5:\d+/);
    expect(s.counters.requests.size).toBe(0);
  });

  it("uploads again and retries once when a task fails because the service lost an uploaded asset", async () => {
    const s = await sandbox();
    const dir = await workspace();
    expect((await runCli(["run", "manifests/beta.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    // Someone deletes the uploaded image on the service (in the console, say).
    expect(await deleteUploadedAssets(s, dir)).toHaveLength(1);

    await writeTree(dir, {
      "manifests/gamma.yaml": BETA.replace("name: beta", "name: gamma").replace("duration: 2", "duration: 3"),
    });
    const result = await runCli(["run", "manifests/gamma.yaml"], { cwd: dir, env: env(s) });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/missing on the service; uploading it again/);
    const [gamma] = await readResults(dir);
    expect(gamma?.status).toBe("Success");
    expect(gamma?.attempts).toBe(2);
    expect(s.counters.generationsCreated).toBe(3); // beta, gamma's failed try, gamma's retry
  });

  it("after an asset shared by many jobs is lost, every job gets its one retry and none is sent with it again", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const shared = (take: string) =>
      `version: 1\nname: shared\ndefaults:\n  model: actor-1\n  resolution: 720p\n  source: ./media/face.png\nvideos:\n${[1, 2, 3, 4, 5, 6].map((i) => `  - id: s${i}\n    chunks:\n      - duration: 5\n        text: "${take} ${i}"\n`).join("")}`;
    await writeTree(dir, { "manifests/shared.yaml": shared("take one") });
    expect((await runCli(["run", "manifests/shared.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    expect(await deleteUploadedAssets(s, dir)).toHaveLength(1);

    await writeTree(dir, { "manifests/shared.yaml": shared("take two") });
    const result = await runCli(["run", "manifests/shared.yaml", "--concurrency", "6"], {
      cwd: dir,
      env: env(s),
    });
    expect(result.code, result.stderr).toBe(0);
    const results = await readResults<{ id: string; status: string; attempts: number }>(dir);
    expect(results.map((r) => r.status)).toEqual(Array(6).fill("Success"));
    for (const r of results) expect(r.attempts).toBeLessThanOrEqual(2);
    // The image content: uploaded by the first run, then once again, shared by every retry.
    expect([...s.counters.uploadsByHash.values()]).toEqual([2]);
  });

  it("when a task fails on one lost asset, every lost asset of the job is uploaded again before its retry", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const avatar = (seconds: number) =>
      `version: 1\nname: both\nvideos:\n  - id: talk\n    model: avatar-h1\n    resolution: 540p\n    source: ./media/face.png\n    chunks:\n      - duration: ${seconds}\n        audio: ./media/voice.wav\n`;
    await writeTree(dir, { "manifests/both.yaml": avatar(2) });
    expect((await runCli(["run", "manifests/both.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    expect(await deleteUploadedAssets(s, dir)).toHaveLength(2); // the image and the audio

    await writeTree(dir, { "manifests/both.yaml": avatar(3) });
    const result = await runCli(["run", "manifests/both.yaml"], { cwd: dir, env: env(s) });
    expect(result.code, result.stderr).toBe(0);
    const [talk] = await readResults<{ status: string; attempts: number }>(dir);
    expect(talk).toMatchObject({ status: "Success", attempts: 2 });
    expect(s.counters.generationsCreated).toBe(3); // the first run, the failed try, the retry
  });

  it("never writes through a symlink planted in the output folder", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const victim = join(dir, "victim.txt");
    await writeFile(victim, "precious");
    await mkdir(join(dir, "out", "beta"), { recursive: true });
    await symlink(victim, join(dir, "out", "beta", "again.mp4"));
    expect((await runCli(["run", "manifests/beta.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    expect(await readFile(victim, "utf8")).toBe("precious");
    expect((await lstat(join(dir, "out", "beta", "again.mp4"))).isSymbolicLink()).toBe(false);

    // A manifest's output folder replaced by a link elsewhere is refused, and nothing is written there.
    const elsewhere = join(dir, "elsewhere");
    await mkdir(elsewhere);
    await rm(join(dir, "out", "beta"), { recursive: true });
    await symlink(elsewhere, join(dir, "out", "beta"));
    await rm(join(dir, ".reel"), { recursive: true });
    const refused = await runCli(["run", "manifests/beta.yaml"], { cwd: dir, env: env(s) });
    expect(refused.code, refused.stderr).toBe(2); // refused before anything is sent, as bad input
    expect(refused.stderr).toMatch(/symbolic link/);
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it("accepts an --out that is itself a link to a folder (a bigger disk), as the user chose it", async () => {
    const s = await sandbox();
    const dir = await workspace();
    await mkdir(join(dir, "big-disk"));
    await symlink(join(dir, "big-disk"), join(dir, "out-link"));
    const result = await runCli(["run", "manifests/beta.yaml", "--out", "out-link"], {
      cwd: dir,
      env: env(s),
    });
    expect(result.code, result.stderr).toBe(0);
    expect((await readdir(join(dir, "big-disk", "beta"))).sort()).toEqual(["again.json", "again.mp4"]);
  });
  it("keeps the old video on disk when an edited spec makes a new one", async () => {
    const s = await sandbox();
    const dir = await workspace();
    expect((await runCli(["run", "manifests/beta.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    const first = (await readResults(dir))[0]!;
    await writeTree(dir, { "manifests/beta.yaml": BETA.replace("duration: 2", "duration: 3") });
    expect((await runCli(["run", "manifests/beta.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    const second = (await readResults(dir))[0]!;
    expect(second.file).toBe("beta/again.mp4");
    expect(second.specHash).not.toBe(first.specHash);
    const kept = `again.${String(first.specHash).slice(0, 8)}`;
    expect((await readdir(join(dir, "out", "beta"))).sort()).toEqual(
      ["again.json", "again.mp4", `${kept}.mp4`, `${kept}.json`].sort(),
    );
    // Each record sits beside its own video.
    const record = async (name: string) =>
      JSON.parse(await readFile(join(dir, "out", "beta", name), "utf8")) as Record<string, unknown>;
    expect(await record(`${kept}.json`)).toMatchObject({ taskId: first.taskId, file: `beta/${kept}.mp4` });
    expect(await record("again.json")).toMatchObject({ taskId: second.taskId, file: "beta/again.mp4" });
    expect(s.counters.generationsCreated).toBe(2);

    // The edit undone: the first video takes its name back, from disk, and nothing is generated.
    await writeTree(dir, { "manifests/beta.yaml": BETA });
    expect((await runCli(["run", "manifests/beta.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    expect(s.counters.generationsCreated).toBe(2);
    const third = (await readResults(dir))[0]!;
    expect(third).toMatchObject({ taskId: first.taskId, file: "beta/again.mp4" });
    expect(await record("again.json")).toMatchObject({ taskId: first.taskId, file: "beta/again.mp4" });
    const keptSecond = `again.${String(second.specHash).slice(0, 8)}`;
    expect(await record(`${keptSecond}.json`)).toMatchObject({
      taskId: second.taskId,
      file: `beta/${keptSecond}.mp4`,
    });
    expect((await readdir(join(dir, "out", "beta"))).sort()).toEqual(
      ["again.json", "again.mp4", `${keptSecond}.mp4`, `${keptSecond}.json`].sort(),
    );
    // status agrees: the job is the version the manifest asks for, not the newest one made.
    const status = JSON.parse((await runCli(["status", "--json"], { cwd: dir, env: {} })).stdout) as {
      jobs: { id: string; taskId: string; file: string }[];
    };
    expect(status.jobs).toEqual([
      expect.objectContaining({ id: "again", taskId: first.taskId, file: "beta/again.mp4" }),
    ]);
  });

  it("collects the video of a task whose manifest was deleted while it ran, on the next run of the folder", async () => {
    const s = await sandbox({ timeScale: 0.25 });
    const dir = await workspace();
    await rm(join(dir, "manifests", "alpha.yaml"));
    await writeTree(dir, {
      "manifests/other.yaml": manyManifest(2).replace(/ {2}- id: v0\n.*\n.*\n.*\n/, ""),
    });
    await interruptOnceSubmitted(s, dir, "manifests/beta.yaml");

    await rm(join(dir, "manifests", "beta.yaml"));
    const rerun = await runCli(["run", "manifests"], { cwd: dir, env: env(s) });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(s.counters.generationsCreated).toBe(2); // beta's task paid once, many/v1 once
    expect(await readdir(join(dir, "out", "beta"))).toEqual(["again.json", "again.mp4"]);
    const status = await runCli(["status"], { cwd: dir, env: {} });
    expect(status.stdout).toMatch(/^beta +1 job: 1 Success$/m);
  });

  it("moves the old video to its hash name when an edit fails, and gives it back when the edit is undone", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    const text = manyManifest(1);
    await writeTree(dir, { "m.yaml": text });
    expect((await runCli(["run", "m.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    const first = (await readResults(dir))[0]!;
    const kept = `v0.${String(first.specHash).slice(0, 8)}`;

    // An asset the service does not have: the new version's task ends Fail.
    await writeTree(dir, {
      "m.yaml": text.replace("    chunks:", "    source: { asset: 999999 }\n    chunks:"),
    });
    expect((await runCli(["run", "m.yaml"], { cwd: dir, env: env(s) })).code).toBe(1);
    const out = join(dir, "out", "many");
    expect((await readdir(out)).sort()).toEqual([`${kept}.json`, `${kept}.mp4`, "v0.json"]);
    const record = (name: string) => readFile(join(out, name), "utf8").then((t) => JSON.parse(t) as object);
    expect(await record("v0.json")).toMatchObject({ status: "Fail", file: null });
    expect(await record(`${kept}.json`)).toMatchObject({ status: "Success", taskId: first.taskId });

    await writeTree(dir, { "m.yaml": text });
    expect((await runCli(["run", "m.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    expect((await readdir(out)).sort()).toEqual(["v0.json", "v0.mp4"]);
    expect(await record("v0.json")).toMatchObject({
      status: "Success",
      taskId: first.taskId,
      file: "many/v0.mp4",
    });
    expect(s.counters.generationsCreated).toBe(2);
  });

  it("keeps apart the videos of two output folders that share a state file", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    const text = manyManifest(1);
    await writeTree(dir, { "m.yaml": text });
    const run = (out: string) => runCli(["run", "m.yaml", "--out", out], { cwd: dir, env: env(s) });
    expect((await run("A")).code).toBe(0);
    await writeTree(dir, { "m.yaml": text.replace('"take 0"', '"take 0, edited"') });
    expect((await run("B")).code).toBe(0);
    const edited = (await readResults(dir, "B"))[0]!;

    // A holds the first version's video under v0.mp4: it is not the edited job's video.
    expect((await run("A")).code).toBe(0);
    const record = JSON.parse(await readFile(join(dir, "A", "many", "v0.json"), "utf8")) as object;
    expect(record).toMatchObject({ taskId: edited.taskId, specHash: edited.specHash });
    expect((await readResults(dir, "A"))[0]).toMatchObject({ taskId: edited.taskId, file: "many/v0.mp4" });
    expect(s.counters.generationsCreated).toBe(2); // fetched again, never generated again
  });

  it("downloads from a local service named localhost whose links say 127.0.0.1", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, { "m.yaml": manyManifest(1) });
    const local = { ...env(s), REEL_BASE_URL: s.baseUrl.replace("127.0.0.1", "localhost") };
    const result = await runCli(["run", "m.yaml"], { cwd: dir, env: local });
    expect(result.code, result.stderr).toBe(0);
    expect((await readResults(dir))[0]).toMatchObject({ status: "Success", file: "many/v0.mp4" });
  });

  it("follows to the end a task whose video was edited while it ran, and keeps that video too", async () => {
    const s = await sandbox({ timeScale: 0.5 }); // 2 s of video: about 1 s of work
    const dir = await workspace();
    await interruptOnceSubmitted(s, dir, "manifests/beta.yaml");
    const first = (await readResults(dir))[0]!;
    expect(first.taskId).toEqual(expect.any(String));

    // Edited while its task is still on the service: a new job, and the paid task is not forgotten.
    await writeTree(dir, { "manifests/beta.yaml": BETA.replace("duration: 2", "duration: 3") });
    expect((await runCli(["run", "manifests/beta.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    expect(s.counters.generationsCreated).toBe(2);
    const kept = `again.${String(first.specHash).slice(0, 8)}`;
    expect((await readdir(join(dir, "out", "beta"))).sort()).toEqual(
      ["again.json", "again.mp4", `${kept}.mp4`, `${kept}.json`].sort(),
    );
    const record = JSON.parse(await readFile(join(dir, "out", "beta", `${kept}.json`), "utf8")) as object;
    expect(record).toMatchObject({ taskId: first.taskId, status: "Success" });
  });
});
