// `persist`: a sandbox started again on the same data dir, on another port, continues where the
// last one stopped, whether that one closed, or was killed with SIGKILL in the middle of requests.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { UsageError } from "../../src/errors/usage.js";
import { BIG_FIRST_ID, type SandboxOptions, startSandbox } from "../../src/sandbox/index.js";
import { REPO as ROOT } from "../helpers/cli.js";
import { type Api, actorRequest, avatarRequest, fixture, idOf, withSandbox } from "./helpers.js";
import { expectServedBytes } from "../helpers/videos.js";

const dirs: string[] = [];

async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "reel-persist-"));
  dirs.push(dir);
  return dir;
}

afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** The highest of `ids` as int64 numbers (Math.max takes no BigInt). */
function maxId(ids: readonly string[]): bigint {
  let max = 0n;
  for (const id of ids) if (BigInt(id) > max) max = BigInt(id);
  return max;
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function download(url: string): Promise<Buffer> {
  const res = await fetch(url);
  expect(res.status, url).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

async function statusOf(api: Api, id: string): Promise<string> {
  const res = await api.call("GET", `/v1/generations/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.json.status;
}

async function waitForStatus(api: Api, id: string, status: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await statusOf(api, id)) !== status) {
    if (Date.now() > deadline) throw new Error(`task ${id} never reached ${status}`);
    await sleep(5);
  }
}

describe("restart on the same data dir", () => {
  test("old asset, speech and task ids work on the new port; the task finishes; new ids are higher", async () => {
    const dataDir = await freshDir();
    // 5 s of video x 0.1 = 500 ms of Running: the task is still unfinished when the first sandbox closes.
    const options: SandboxOptions = { dataDir, persist: true, preProcessingMs: 50, timeScale: 0.1 };
    const image = await fixture("tiny.png");
    const old = await withSandbox(options, async (api) => {
      const imageId = idOf(await api.upload(image));
      const speech = await api.call("POST", "/v1/audios", { body: { voiceId: 7, text: "hello again" } });
      expect(speech.status).toBe(200);
      const speechId = idOf(speech);
      const taskId = idOf(
        await api.call("POST", "/v1/generations", { body: avatarRequest(imageId, speechId) }),
      );
      expect(await statusOf(api, taskId)).not.toBe("Success");
      return { imageId, speechId, taskId, baseUrl: api.sandbox.baseUrl };
    });

    await withSandbox(options, async (api) => {
      const files = new RegExp(`^${api.sandbox.baseUrl}/files/`);
      const asset = await api.call("GET", `/v1/assets/${old.imageId}`);
      expect(asset.status).toBe(200);
      expect(asset.json.url).toMatch(files);
      expect((await download(asset.json.url)).equals(image)).toBe(true);

      const speech = await api.call("GET", `/v1/assets/${old.speechId}`);
      expect(speech.status).toBe(200);
      expect((await download(speech.json.url)).toString("latin1", 0, 4)).toBe("RIFF");

      const final = await api.waitForFinal(old.taskId);
      expect(final.json).toMatchObject({ id: Number(old.taskId), status: "Success" });
      expect(final.json.resultVideoURL).toMatch(files);
      const video = await download(final.json.resultVideoURL);
      expectServedBytes(video);
      expect(video.length).toBeGreaterThan(1000);

      const newId = BigInt(idOf(await api.upload(image)));
      expect(newId).toBeGreaterThan(maxId([old.imageId, old.speechId, old.taskId, final.json.resultVideoId]));
      // Counters are instrumentation of one process: they start empty.
      expect(api.sandbox.counters.generationsCreated).toBe(0);
    });
  });

  test("a Running task continues; what finished while down is finished; slots stay respected", async () => {
    const dataDir = await freshDir();
    // One slot, 1500 ms of Running per task: the down time below ends the first task and starts the second.
    const options: SandboxOptions = { dataDir, persist: true, slots: 1, preProcessingMs: 0, timeScale: 0.3 };
    const ids = await withSandbox(options, async (api) => {
      const submitted: string[] = [];
      for (let seed = 0; seed < 3; seed++) {
        submitted.push(idOf(await api.call("POST", "/v1/generations", { body: actorRequest({ seed }) })));
      }
      await waitForStatus(api, submitted[0] ?? "", "Running");
      expect(await statusOf(api, submitted[1] ?? "")).toBe("Pending");
      return submitted;
    });
    const [first = "", second = "", third = ""] = ids;
    await sleep(1700);
    await withSandbox(options, async (api) => {
      expect(await statusOf(api, first)).toBe("Success");
      // Started when the first finished, during the down time, and still within its 1500 ms.
      expect(await statusOf(api, second)).toBe("Running");
      expect(await statusOf(api, third)).toBe("Pending");
      await waitForStatus(api, second, "Success");
      expect(await statusOf(api, third)).toBe("Running");
      expect((await api.waitForFinal(third)).json.status).toBe("Success");
    });
  }, 20_000);

  test("a deleted asset stays deleted; the credit balance carries over; `credits` applies to a new dir only", async () => {
    const dataDir = await freshDir();
    const options: SandboxOptions = {
      dataDir,
      persist: true,
      credits: 100,
      preProcessingMs: 0,
      timeScale: 0,
    };
    const old = await withSandbox(options, async (api) => {
      const imageId = idOf(await api.upload(await fixture("tiny.png")));
      const audioId = idOf(await api.upload(await fixture("tiny.mp3")));
      expect((await api.call("DELETE", `/v1/assets/${imageId}`)).status).toBe(200);
      const done = idOf(await api.call("POST", "/v1/generations", { body: actorRequest() }));
      expect((await api.waitForFinal(done)).json.status).toBe("Success");
      expect(api.sandbox.credits()).toBe(95);
      return { imageId, audioId };
    });
    expect(await readdir(join(dataDir, "assets"))).toEqual([`${old.audioId}.mp3`]);

    await withSandbox({ ...options, credits: 5 }, async (api) => {
      expect(api.sandbox.credits()).toBe(95);
      expect((await api.call("GET", `/v1/assets/${old.imageId}`)).status).toBe(404);
      expect((await api.call("DELETE", `/v1/assets/${old.imageId}`)).status).toBe(404);
      const task = idOf(
        await api.call("POST", "/v1/generations", { body: avatarRequest(old.imageId, old.audioId) }),
      );
      const final = await api.waitForFinal(task);
      expect(final.json.status).toBe("Fail");
      expect(final.json.failReason).toContain(`asset ${old.imageId} was deleted`);
      // Charged, then given back on Fail.
      expect(api.sandbox.credits()).toBe(95);
      api.sandbox.setCredits(3);
    });

    await withSandbox(options, async (api) => {
      expect(api.sandbox.credits()).toBe(3);
      api.sandbox.setCredits(undefined);
    });
    await withSandbox(options, async (api) => expect(api.sandbox.credits()).toBeUndefined());
  });

  test("files a killed sandbox left half done are swept at start; live files stay", async () => {
    const dataDir = await freshDir();
    const options: SandboxOptions = { dataDir, persist: true };
    const imageId = await withSandbox(options, async (api) =>
      idOf(await api.upload(await fixture("tiny.png"))),
    );
    await writeFile(join(dataDir, "tmp", "upload-0123456789abcdef"), "half an upload");
    await writeFile(join(dataDir, "assets", "999999.png"), "moved in, never committed");
    await withSandbox(options, async (api) => {
      expect(await readdir(join(dataDir, "tmp"))).toEqual([]);
      expect(await readdir(join(dataDir, "assets"))).toEqual([`${imageId}.png`]);
      expect((await api.call("GET", `/v1/assets/${imageId}`)).status).toBe(200);
    });
  });

  test("bigIds on an existing data dir jumps ahead; the sequence never goes back", async () => {
    const dataDir = await freshDir();
    const small = await withSandbox({ dataDir, persist: true }, async (api) =>
      idOf(await api.call("POST", "/v1/audios", { body: { voiceId: 1, text: "a" } })),
    );
    expect(small).toBe("1001");
    const big = await withSandbox({ dataDir, persist: true, bigIds: true }, async (api) =>
      idOf(await api.call("POST", "/v1/audios", { body: { voiceId: 1, text: "b" } })),
    );
    expect(big).toBe(BIG_FIRST_ID.toString());
    const after = await withSandbox({ dataDir, persist: true }, async (api) =>
      idOf(await api.call("POST", "/v1/audios", { body: { voiceId: 1, text: "c" } })),
    );
    expect(BigInt(after)).toBe(BIG_FIRST_ID + 1n);
  });
});

describe("options", () => {
  test("persist without dataDir is a usage error that names the option", async () => {
    await expect(startSandbox({ persist: true })).rejects.toThrow(UsageError);
    await expect(startSandbox({ persist: true })).rejects.toThrow(/`dataDir`.*`persist`/);
  });

  test("one sandbox at a time on a persistent data dir; the next may start once it closes", async () => {
    const dataDir = await freshDir();
    const first = await startSandbox({ dataDir, persist: true });
    try {
      await expect(startSandbox({ dataDir, persist: true })).rejects.toThrow(/another sandbox is using/);
    } finally {
      await first.close();
    }
    const second = await startSandbox({ dataDir, persist: true });
    await second.close();
  });

  test("without persist, a given data dir gets no database and no sweep", async () => {
    const dataDir = await freshDir();
    await mkdir(join(dataDir, "tmp"), { recursive: true });
    await writeFile(join(dataDir, "tmp", "keep-me"), "not the sandbox's to sweep");
    await withSandbox({ dataDir }, async (api) => {
      await api.upload(await fixture("tiny.png"));
    });
    expect(existsSync(join(dataDir, "sandbox.db"))).toBe(false);
    expect(await readdir(join(dataDir, "tmp"))).toEqual(["keep-me"]);
  });
});

/** `reel sandbox --data-dir DIR` as a child process, and where it listens. */
async function spawnSandbox(dataDir: string, key: string) {
  const child = spawn(
    process.execPath,
    [
      join(ROOT, "bin/reel.js"),
      "sandbox",
      "--port",
      "0",
      "--key",
      key,
      "--time-scale",
      "0.01",
      "--data-dir",
      dataDir,
    ],
    { cwd: ROOT },
  );
  child.stderr.resume();
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.on("exit", (code, signal) => resolve(signal ?? code)),
  );
  let out = "";
  const baseUrl = await new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const found = /^export REEL_BASE_URL=(\S+)\nexport REEL_API_KEY=\S+\n$/.exec(out);
      if (found?.[1]) resolve(found[1]);
    });
    void exited.then((code) => reject(new Error(`reel sandbox exited ${code} before listening`)));
  });
  return { child, exited, baseUrl };
}

describe("kill -9", () => {
  test("every id answered before SIGKILL is known to the next sandbox", { timeout: 60_000 }, async () => {
    const dataDir = await freshDir();
    const key = "sk-persist-test";
    const { child, exited, baseUrl } = await spawnSandbox(dataDir, key);
    const auth = { authorization: `Bearer ${key}` };
    const tasks: string[] = [];
    const assets: string[] = [];
    const image = await fixture("tiny.png");
    let stop = false;
    try {
      // Four clients write as fast as they can; the kill lands while some of their requests are in flight.
      const clients = [0, 1, 2, 3].map(async (client) => {
        for (let i = 0; !stop; i++) {
          try {
            let res: Response;
            if (client === 0) {
              const form = new FormData();
              form.append("file", new Blob([image]), "face.png");
              res = await fetch(`${baseUrl}/v1/assets`, { method: "POST", headers: auth, body: form });
            } else if (client === 1) {
              res = await fetch(`${baseUrl}/v1/audios`, {
                method: "POST",
                headers: { ...auth, "content-type": "application/json" },
                body: JSON.stringify({ voiceId: 2, text: `line ${i}` }),
              });
            } else {
              res = await fetch(`${baseUrl}/v1/generations`, {
                method: "POST",
                headers: { ...auth, "content-type": "application/json" },
                body: JSON.stringify(actorRequest({ seed: client * 100_000 + i })),
              });
            }
            const text = await res.text();
            expect(res.status, text).toBe(200);
            const id = /"id":(\d+)/.exec(text)?.[1] ?? "";
            (client >= 2 ? tasks : assets).push(id);
          } catch (error) {
            if (stop) return; // the connection died with the process
            throw error;
          }
          if (tasks.length + assets.length >= 60 && !stop) {
            stop = true;
            child.kill("SIGKILL");
          }
        }
      });
      await Promise.all(clients);
      expect(await exited).toBe("SIGKILL");
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }

    await withSandbox({ dataDir, persist: true, apiKey: key, timeScale: 0.01 }, async (api) => {
      for (const id of assets)
        expect((await api.call("GET", `/v1/assets/${id}`)).status, `asset ${id}`).toBe(200);
      for (const id of tasks) {
        expect((await api.waitForFinal(id)).json.status, `task ${id}`).toBe("Success");
      }
      const newId = BigInt(idOf(await api.upload(image)));
      expect(newId).toBeGreaterThan(maxId([...tasks, ...assets]));
    });
  });
});
