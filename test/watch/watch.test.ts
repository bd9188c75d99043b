// `reel watch` with real files, real file events and the sandbox over real HTTP: every way a
// manifest can land, change or go, and the sandbox's counters prove nothing is submitted twice.
import { existsSync } from "node:fs";
import { mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { StateStore } from "../../src/state/sqlite/store.js";
import { runCli, useCommands, until, writeTree } from "../helpers/cli.js";
import { failDownloadRecords } from "../helpers/state-faults.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { readResults } from "../helpers/results.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
// Stopped after each test, before the sandboxes close.
const startCommand = useCommands();

function manifest(name: string, videos: { id: string; text: string; duration?: number }[]): string {
  const body = videos
    .map(
      (v) =>
        `  - id: ${v.id}\n    chunks:\n      - duration: ${v.duration ?? 5}\n        text: "${v.text}"\n`,
    )
    .join("");
  return `version: 1\nname: ${name}\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${body}`;
}

async function workspace(): Promise<string> {
  const dir = await tempDir();
  await mkdir(join(dir, "incoming"));
  return dir;
}

/** A watcher with a short settle time, so tests run quickly (writeFile saves a manifest at once). */
function watcher(dir: string, s: Sandbox, extra: string[] = ["--settle", "200ms"], key = s.apiKey) {
  return startCommand(["watch", "incoming", ...extra], {
    cwd: dir,
    env: { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: key },
  });
}

const video = (dir: string, manifestName: string, id: string) => join(dir, "out", manifestName, `${id}.mp4`);

describe("reel watch", () => {
  it("runs manifests that are written, copied and renamed into place; an edit runs only what changed", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const w = watcher(dir, s);
    await until(() => w.output().stderr.includes("watching"), "the watcher to be ready");

    await writeFile(
      join(dir, "incoming", "a.yaml"),
      manifest("a", [
        { id: "v0", text: "one" },
        { id: "v1", text: "two" },
      ]),
    );
    await until(() => existsSync(video(dir, "a", "v0")) && existsSync(video(dir, "a", "v1")), "a's videos");

    await writeTree(dir, { "elsewhere/b.yaml": manifest("b", [{ id: "v0", text: "three" }]) });
    await writeFile(join(dir, "incoming", "b.yaml"), manifest("b", [{ id: "v0", text: "three" }])); // a copy
    await until(() => existsSync(video(dir, "b", "v0")), "b's video");

    // An editor's save: write a temp file, then rename it over the target.
    await writeFile(join(dir, "incoming", ".c.yaml.swp"), manifest("c", [{ id: "v0", text: "four" }]));
    await rename(join(dir, "incoming", ".c.yaml.swp"), join(dir, "incoming", "c.yaml"));
    await until(() => existsSync(video(dir, "c", "v0")), "c's video");
    expect(s.counters.generationsCreated).toBe(4);

    // Edit: v1 changes, v2 is new, v0 is untouched.
    await writeFile(
      join(dir, "incoming", "a.yaml"),
      manifest("a", [
        { id: "v0", text: "one" },
        { id: "v1", text: "two, but louder" },
        { id: "v2", text: "five" },
      ]),
    );
    await until(() => existsSync(video(dir, "a", "v2")) && s.counters.generationsCreated === 6, "a's edit");
    const result = await w.stop();
    expect(result.code).toBe(0);
    expect(s.counters.generationsCreated).toBe(6);
    expect(s.counters.duplicateGenerations()).toBe(0);
    // One line per current job: a/v0, a/v1 (its new version), a/v2, b/v0, c/v0.
    const results = await readResults<{ manifest: string; status: string }>(dir);
    expect(results).toHaveLength(5);
    expect(results.every((r) => r.status === "Success")).toBe(true);
  });

  it("drops the unsubmitted videos of a deleted manifest and follows the submitted one to the end", async () => {
    const s = await sandbox({ slots: 1, timeScale: 0.15 });
    const dir = await workspace();
    const w = watcher(dir, s, ["--concurrency", "1", "--settle", "200ms"]);
    await until(() => w.output().stderr.includes("watching"), "the watcher to be ready");
    const videos = Array.from({ length: 5 }, (_, i) => ({ id: `v${i}`, text: `take ${i}`, duration: 10 }));
    await writeFile(join(dir, "incoming", "d.yaml"), manifest("d", videos));
    await until(() => s.counters.generationsCreated === 1, "the first submission");
    await rm(join(dir, "incoming", "d.yaml"));
    await until(() => w.output().stderr.includes("deleted"), "the deletion to be seen");
    // The one in flight is followed and downloaded; nothing else is submitted.
    await until(
      () => readdir(join(dir, "out", "d")).then((f) => f.some((n) => n.endsWith(".mp4"))),
      "its video",
      20_000,
    );
    // The slot freed before the download: a dropped video sent in it would have been by now.
    await new Promise((r) => setTimeout(r, 1_000));
    // The dropped videos are forgotten, not shown as waiting: status lists the one paid for alone.
    const status = await runCli(["status", "--json"], { cwd: dir });
    const jobs = (JSON.parse(status.stdout) as { jobs: { id: string; status: string }[] }).jobs;
    expect(jobs.map((j) => `${j.id} ${j.status}`)).toEqual(["v0 Success"]);
    await w.stop();
    expect(s.counters.generationsCreated).toBe(1);
  });

  it("runs a manifest skipped for a name clash once the file holding the name is gone", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const w = watcher(dir, s);
    await until(() => w.output().stderr.includes("watching"), "the watcher to be ready");
    await writeFile(join(dir, "incoming", "one.yaml"), manifest("w1", [{ id: "first", text: "one" }]));
    await until(() => existsSync(video(dir, "w1", "first")), "the first manifest's video");
    await writeFile(join(dir, "incoming", "two.yaml"), manifest("w1", [{ id: "second", text: "two" }]));
    await until(() => w.output().stderr.includes("already used by incoming/one.yaml"), "the clash");
    await rm(join(dir, "incoming", "one.yaml"));
    // No touch of two.yaml needed: the name is free, so it is read again.
    await until(() => existsSync(video(dir, "w1", "second")), "the second manifest's video");
    await w.stop();
    expect(s.counters.generationsCreated).toBe(2);
  });

  it("says when a renamed manifest's videos are made and paid for again", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const w = watcher(dir, s);
    await until(() => w.output().stderr.includes("watching"), "the watcher to be ready");
    const text = manifest("x", [{ id: "v0", text: "same" }]).replace("name: x\n", "");
    await writeFile(join(dir, "incoming", "promo.yaml"), text);
    await until(() => existsSync(video(dir, "promo", "v0")), "the video");
    await rename(join(dir, "incoming", "promo.yaml"), join(dir, "incoming", "promo-final.yaml"));
    await until(
      () =>
        w
          .output()
          .stderr.includes(
            "1 new job repeats a video already made under another name (promo-final/v0 = promo/v0)",
          ),
      "the note",
    );
    await w.stop();
  });

  it("--retry-failed resubmits a failed video once per session, not at every save of its manifest", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const w = watcher(dir, s, ["--retry-failed", "--settle", "200ms"]);
    await until(() => w.output().stderr.includes("watching"), "the watcher to be ready");
    const broken = `version: 1\nname: r\nvideos:\n  - id: bad\n    model: actor-2\n    resolution: 720p\n    chunks:\n      - duration: 5\n        text: "x"\n        audio: { asset: 99999999 }\n`;
    const submissions = () => s.counters.requestCount("POST", "/v1/generations");
    await writeFile(join(dir, "incoming", "r.yaml"), broken);
    await until(() => w.output().stderr.includes("failed    r/bad"), "the failure");
    expect(submissions()).toBe(1);
    await writeFile(join(dir, "incoming", "r.yaml"), broken); // saved again: the one retry
    await until(() => submissions() === 2, "the retry");
    await until(() => w.output().stderr.split("failed    r/bad").length === 3, "the retry's failure");
    await writeFile(join(dir, "incoming", "r.yaml"), `${broken}\n`); // and again: no more
    await until(() => w.output().stderr.split("1 video of 'r'").length === 4, "the third read");
    await new Promise((r) => setTimeout(r, 500));
    await w.stop();
    expect(submissions()).toBe(2);
  });

  it("handles a burst of 200 manifests landing at once, each video submitted once", async () => {
    const s = await sandbox({ slots: 16, timeScale: 0.001, preProcessingMs: 1 });
    const dir = await workspace();
    const w = watcher(dir, s, ["--concurrency", "16", "--settle", "200ms"]);
    await until(() => w.output().stderr.includes("watching"), "the watcher to be ready");
    await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        writeFile(join(dir, "incoming", `m${i}.yaml`), manifest(`m${i}`, [{ id: "v", text: `burst ${i}` }])),
      ),
    );
    await until(
      async () =>
        (await readdir(join(dir, "out")).catch(() => [])).filter((n) => n.startsWith("m")).length === 200 &&
        s.counters.generationsCreated === 200,
      "200 submissions",
      60_000,
    );
    await until(() => existsSync(video(dir, "m199", "v")) && existsSync(video(dir, "m0", "v")), "the videos");
    await w.stop();
    expect(s.counters.generationsCreated).toBe(200);
    expect(s.counters.duplicateGenerations()).toBe(0);
  }, 90_000);

  it("with the default settle time, reads a manifest written in two bursts 400 ms apart once, whole", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const w = watcher(dir, s, []);
    await until(() => w.output().stderr.includes("watching"), "the watcher to be ready");
    // A script that pauses mid-file: the prefix is a valid manifest of a shorter prompt.
    const whole = manifest("slow", [{ id: "v0", text: "a woman reads a book by the window" }]);
    const cut = whole.indexOf(" by the window");
    await writeFile(join(dir, "incoming", "slow.yaml"), `${whole.slice(0, cut)}"\n`);
    await new Promise((r) => setTimeout(r, 400));
    await writeFile(join(dir, "incoming", "slow.yaml"), whole);
    await until(() => existsSync(video(dir, "slow", "v0")), "the video");
    await w.stop();
    expect(s.counters.generationsCreated).toBe(1);
    expect((await readResults(dir)).map((r) => r.specHash)).toHaveLength(1);
  });

  it("waits longer for a file cut mid-line, even when its first part is a valid manifest", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const w = watcher(dir, s);
    await until(() => w.output().stderr.includes("watching"), "the watcher to be ready");
    const start = `version: 1\nname: cut\nvideos:\n  - id: v0\n    model: actor-2\n    resolution: 720p\n    chunks:\n      - duration: 5\n        text: a woman reads a book`;
    await writeFile(join(dir, "incoming", "cut.yaml"), start); // no line break at the end
    await new Promise((r) => setTimeout(r, 800)); // well past the settle time (200 ms)
    expect(s.counters.generationsCreated).toBe(0);
    await writeFile(join(dir, "incoming", "cut.yaml"), `${start} by the window\n`);
    await until(() => existsSync(video(dir, "cut", "v0")), "the video");
    await w.stop();
    expect(s.counters.generationsCreated).toBe(1);
    const [result] = await readResults<{ status: string }>(dir);
    expect(result?.status).toBe("Success");
  });

  it("watches a hidden folder (~/.queue): only hidden entries below it are skipped", async () => {
    const s = await sandbox();
    const dir = await workspace();
    await writeTree(dir, { ".queue/h.yaml": manifest("h", [{ id: "v0", text: "hidden" }]) });
    const w = startCommand(["watch", ".queue", "--settle", "200ms"], {
      cwd: dir,
      env: { REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey },
    });
    await until(() => existsSync(video(dir, "h", "v0")), "the video of a manifest in the hidden folder");
    await w.stop();
    expect(s.counters.generationsCreated).toBe(1);
  });

  it("--json prints one JSON line per event on stdout, for scripts", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const w = watcher(dir, s, ["--settle", "200ms", "--json"]);
    await until(() => w.output().stderr.includes("watching"), "the watcher to be ready");
    await writeFile(join(dir, "incoming", "j.yaml"), manifest("j", [{ id: "v0", text: "json" }]));
    await until(() => existsSync(video(dir, "j", "v0")), "the video");
    const { stdout } = await w.stop();
    const events = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { event: string; key: string | null; at: string });
    expect(events.filter((e) => e.key === "j/v0").map((e) => e.event)).toEqual(
      expect.arrayContaining(["submitted", "done"]),
    );
    for (const e of events) expect(new Date(e.at).toISOString()).toBe(e.at);
  });

  it("says it waits for a media file not there yet (not 'skipped'), and runs the manifest once the file lands", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const w = watcher(dir, s);
    await until(() => w.output().stderr.includes("watching"), "the watcher to be ready");
    const withFace = `version: 1\nname: late\nvideos:\n  - id: v0\n    model: avatar-h1\n    resolution: 540p\n    source: ./face.png\n    chunks:\n      - duration: 5\n        speech: { voice: 17, text: "hello" }\n`;
    await writeFile(join(dir, "incoming", "late.yaml"), withFace);
    await until(
      () => w.output().stderr.includes("incoming/late.yaml: waiting for incoming/face.png"),
      "the missing file said as awaited",
    );
    expect(w.output().stderr).not.toContain("skipped");
    expect(s.counters.requests.size).toBe(0);
    await writeTree(dir, { "incoming/face.png": { fixture: "tiny.png" } });
    await until(() => existsSync(video(dir, "late", "v0")), "the video, once its source landed", 10_000);
    await w.stop();
    expect(s.counters.generationsCreated).toBe(1);
    // Said once, not at every check while it waited.
    expect(w.output().stderr.split("waiting for incoming/face.png").length - 1).toBe(1);
  });

  it("goes on watching a folder that was deleted and made again", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const w = watcher(dir, s);
    await until(() => w.output().stderr.includes("watching"), "the watcher to be ready");
    await rm(join(dir, "incoming"), { recursive: true });
    await until(() => w.output().stderr.includes("incoming is gone"), "the folder to be missed");
    await mkdir(join(dir, "incoming"));
    await until(() => w.output().stderr.includes("was replaced"), "the new folder to be watched");
    await writeFile(join(dir, "incoming", "back.yaml"), manifest("back", [{ id: "v0", text: "again" }]));
    await until(() => existsSync(video(dir, "back", "v0")), "the video of a manifest in the new folder");
    await w.stop();
    expect(s.counters.generationsCreated).toBe(1);
  });

  it("reports an invalid manifest once, sends nothing for it, and runs it once fixed", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const w = watcher(dir, s);
    await until(() => w.output().stderr.includes("watching"), "the watcher to be ready");
    const bad = manifest("e", [{ id: "v0", text: "six" }]).replace("resolution: 720p", "resolution: 540p");
    await writeFile(join(dir, "incoming", "e.yaml"), bad);
    await until(() => w.output().stderr.includes("skipped until fixed"), "the problem report");
    expect(w.output().stderr).toMatch(/incoming\/e\.yaml:5:\d+: .*720p or 1080p/);
    await writeFile(join(dir, "incoming", "e.yaml"), bad); // touched again, same problem
    await new Promise((r) => setTimeout(r, 600));
    expect(s.counters.requests.size).toBe(0);
    await writeFile(join(dir, "incoming", "e.yaml"), manifest("e", [{ id: "v0", text: "six" }]));
    await until(() => existsSync(video(dir, "e", "v0")), "the fixed manifest's video");
    const { stderr } = await w.stop();
    expect(stderr.split("skipped until fixed").length - 1).toBe(1);
  });

  it("with no credits left, pauses and says it resumes by itself, not to rerun", async () => {
    const s = await sandbox({ credits: 5 });
    const dir = await workspace();
    const w = watcher(dir, s);
    await until(() => w.output().stderr.includes("watching"), "the watcher to be ready");
    const two = [
      { id: "v0", text: "paid" },
      { id: "v1", text: "no credits left for this one" },
    ];
    await writeFile(join(dir, "incoming", "c.yaml"), manifest("c", two));
    await until(() => w.output().stderr.includes("paused:"), "the pause");
    const { stderr } = await w.stop();
    const pause = stderr.split("\n").find((line) => line.includes("paused:"))!;
    expect(pause).toContain("not enough credits");
    expect(pause).toContain("work resumes by itself");
    expect(pause).not.toContain("rerun");
  });

  it("resumes after a restart, including manifests that landed or changed while it was stopped", async () => {
    const s = await sandbox();
    const dir = await workspace();
    let w = watcher(dir, s);
    await until(() => w.output().stderr.includes("watching"), "the watcher to be ready");
    await writeFile(join(dir, "incoming", "f.yaml"), manifest("f", [{ id: "v0", text: "seven" }]));
    await until(() => existsSync(video(dir, "f", "v0")), "f's video");
    expect((await w.stop()).code).toBe(0);

    await writeFile(join(dir, "incoming", "g.yaml"), manifest("g", [{ id: "v0", text: "eight" }]));
    await writeFile(
      join(dir, "incoming", "f.yaml"),
      manifest("f", [
        { id: "v0", text: "seven" },
        { id: "v1", text: "nine" },
      ]),
    );
    w = watcher(dir, s);
    await until(
      () => existsSync(video(dir, "g", "v0")) && existsSync(video(dir, "f", "v1")),
      "g and f's new video",
    );
    await w.stop();
    expect(s.counters.generationsCreated).toBe(3);
    expect(s.counters.duplicateGenerations()).toBe(0);
  });

  it("ends with exit 1 and says why when the state file can no longer be written", async () => {
    const s = await sandbox();
    const dir = await workspace();
    const statePath = join(dir, ".reel", "state.db");
    await mkdir(join(dir, ".reel"));
    await StateStore.open(statePath, { baseUrl: s.baseUrl }).close();
    failDownloadRecords(statePath);
    const w = watcher(dir, s);
    await until(() => w.output().stderr.includes("watching"), "the watcher to start");
    await writeFile(join(dir, "incoming", "a.yaml"), manifest("a", [{ id: "v", text: "hello" }]));
    const code = await Promise.race([
      w.exited,
      new Promise((resolve) => setTimeout(() => resolve("still running"), 15_000)),
    ]);
    if (code === "still running") await w.stop();
    expect(code).toBe(1);
    expect(w.output().stderr).toContain(
      `could not write the state file ${statePath}: database or disk is full`,
    );
  });

  it("pauses on a rejected key, says so once, and resumes by itself once the key is accepted", async () => {
    const s = await sandbox({ apiKey: "sk-right-key" });
    const dir = await workspace();
    const w = watcher(dir, s, ["--settle", "200ms"], "sk-the-key-reel-has");
    await until(() => w.output().stderr.includes("watching"), "the watcher to be ready");
    await writeFile(
      join(dir, "incoming", "h.yaml"),
      manifest("h", [
        { id: "v0", text: "ten" },
        { id: "v1", text: "eleven" },
      ]),
    );
    await until(() => w.output().stderr.includes("paused"), "the pause");
    await new Promise((r) => setTimeout(r, 500));
    s.setApiKey("sk-the-key-reel-has"); // the account's key is fixed on the service side
    await until(
      () => existsSync(video(dir, "h", "v0")) && existsSync(video(dir, "h", "v1")),
      "h's videos",
      30_000,
    );
    const { stderr, code } = await w.stop();
    expect(code).toBe(0);
    expect(stderr.split("paused:").length - 1).toBe(1);
    expect(stderr).not.toContain("sk-the-key-reel-has");
    expect(s.counters.generationsCreated).toBe(2);
  });
});
