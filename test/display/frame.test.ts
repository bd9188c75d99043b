// The live display's frame as a pure function of what the engine told and the clock: what a user
// reads in it (the bar, the ETA, the counts of this run apart from earlier ones, why reel waits, the
// jobs in flight by name), and that it fits an 80-column terminal whatever it holds.
import pc from "picocolors";
import { describe, expect, it } from "vitest";
import type { JobFacts, ProgressEvent } from "../../src/engine/progress.js";
import { RunTimes } from "../../src/engine/run-times.js";
import { renderFrame } from "../../src/display/frame.js";
import { plainText, visibleWidth } from "../../src/display/text-wrap.js";
import { makeJsonProgress, makeLineProgress } from "../../src/display/lines.js";
import { applyEvent, makeLiveState } from "../../src/display/live-state.js";
import { etaMs } from "../../src/display/live-readings.js";

const plain = pc.createColors(false);
const colored = pc.createColors(true);

/** A job of 10 s of video of actor-2 at 720p. */
function facts(key: string, done = false): JobFacts {
  return { key, version: "v1", seconds: 10, model: "actor-2", resolution: "720p", done };
}

/** `total` jobs (m/j0, m/j1...), the first `before` of them done before, and `named` ones. */
function jobsOf(total: number, before: number, named: readonly string[] = []): JobFacts[] {
  const keys = [...named, ...Array.from({ length: total - named.length }, (_, i) => `m/j${i}`)];
  return keys.map((key, i) => facts(key, i >= named.length && i - named.length < before));
}

/** A run's state: its jobs, then `events`, each at its time (ms from 0). */
function stateOf(
  concurrency: number,
  jobs: readonly JobFacts[],
  events: [number, ProgressEvent][],
  learned: RunTimes = new RunTimes(),
) {
  const state = makeLiveState(concurrency, 0);
  applyEvent(state, { stage: "run-times", learned }, 0);
  applyEvent(state, { stage: "manifest", key: "", jobs }, 0);
  for (const [at, e] of events) applyEvent(state, e, at);
  return state;
}

const job = (stage: ProgressEvent["stage"], key: string): ProgressEvent => ({ stage, key });

describe("the live display's frame", () => {
  it("shows the bar with done/total, an ETA from the learned run times, and this run apart from earlier ones", () => {
    // Learned: 10 s of video take 10 s.
    const learned = new RunTimes();
    for (let i = 0; i < 3; i++) learned.observe({ model: "actor-2", resolution: "720p" }, 10_000, 10);
    const state = stateOf(
      2,
      jobsOf(10, 4, ["spring/a", "spring/b", "spring/c"]),
      [
        [0, job("submitting", "spring/a")],
        [0, job("submitted", "spring/a")],
        [0, job("submitting", "spring/b")],
        [0, job("submitted", "spring/b")],
        [10_000, { stage: "ended", key: "spring/a", detail: "Success", ms: 10_000 }],
        [10_000, job("done", "spring/a")],
        [10_000, job("submitting", "spring/c")],
        [10_000, job("submitted", "spring/c")],
        [12_000, job("failed", "spring/b")],
      ],
      learned,
    );
    const lines = renderFrame(state, { now: 12_000, width: 80, colors: plain });
    // 4 done before + 2 ended now.
    expect(lines[0]).toMatch(/^█+░+ {2}6\/10 videos · ETA \d+ s$/);
    expect(lines[1]).toMatch(/^this run: 1 done · 1 failed · 0 uncertain · 4 done before · 12 s$/);
    // spring/c has 8 s left; 3 more not started, 10 s each, two at a time: its slot frees at 8 s,
    // the other at 0: 0 + 10 + 10 on one, 8 + 10 on the other: 20 s.
    expect(etaMs(state, 12_000)).toBeCloseTo(20_000, -2);
    expect(lines[0]).toContain("ETA 20 s");
  });

  it("counts a rerun's earlier failures, left as they are, as ended before", () => {
    const state = stateOf(1, jobsOf(3, 0, ["m/ok", "m/bad", "m/old"]), [
      [0, { stage: "ended-before", key: "m/bad", detail: "Fail" }],
    ]);
    applyEvent(
      state,
      { stage: "manifest", key: "", jobs: [facts("m/ok"), facts("m/bad"), facts("m/old", true)] },
      0,
    );
    applyEvent(state, job("done", "m/ok"), 1_000);
    const lines = renderFrame(state, { now: 1_000, width: 80, colors: plain });
    expect(lines[0]).toMatch(/3\/3 videos$/);
    expect(lines[1]).toMatch(/this run: 1 done · 0 failed · 0 uncertain · 1 done before, 1 failed before/);
  });

  it("says the ETA is learning until a task of the service ended, and has none once all jobs are", () => {
    const learned = new RunTimes();
    const state = stateOf(1, jobsOf(2, 0, ["m/a", "m/b"]), [[0, job("submitting", "m/a")]], learned);
    expect(renderFrame(state, { now: 5_000, width: 80, colors: plain })[0]).toMatch(
      /0\/2 videos · ETA learning$/,
    );
    learned.observe({ model: "actor-2", resolution: "720p" }, 6_000, 10);
    learned.observe({ model: "actor-2", resolution: "720p" }, 6_000, 10);
    applyEvent(state, { stage: "ended", key: "m/a", detail: "Success", ms: 6_000 }, 6_000);
    applyEvent(state, job("done", "m/a"), 6_000);
    applyEvent(state, job("submitting", "m/b"), 6_000);
    expect(renderFrame(state, { now: 7_000, width: 80, colors: plain })[0]).toMatch(/1\/2 videos · ETA 5 s$/);
    applyEvent(state, job("done", "m/b"), 8_000);
    expect(renderFrame(state, { now: 8_000, width: 80, colors: plain })[0]).toMatch(/2\/2 videos$/);
  });

  it("times a task of an earlier run followed again from its submission, not from now", () => {
    const learned = new RunTimes();
    learned.observe({ model: "actor-2", resolution: "720p" }, 10_000, 10);
    learned.observe({ model: "actor-2", resolution: "720p" }, 10_000, 10);
    const state = stateOf(
      1,
      jobsOf(1, 0, ["m/a"]),
      [[0, { stage: "following", key: "m/a", detail: "Running", ms: 7_000 }]],
      learned,
    );
    expect(etaMs(state, 1_000)).toBeCloseTo(2_000, -2);
  });

  it("says why reel waits: slots full, the service's queue, a Retry-After with its seconds, a pause", () => {
    const state = stateOf(2, jobsOf(6, 0, ["m/a", "m/b", "m/c", "m/d"]), [
      [0, job("submitting", "m/a")],
      [0, job("submitted", "m/a")],
      [0, job("submitting", "m/b")],
      [0, job("submitted", "m/b")],
      [100, job("pending", "m/b")],
      [100, job("running", "m/a")],
      [200, job("queued", "m/c")],
      [200, job("queued", "m/d")],
      [1_000, { stage: "waiting", ms: 30_000, detail: "the service refuses new submissions for now" }],
      [1_000, { stage: "paused", ms: 60_000, detail: "no credits left on the service" }],
    ]);
    const text = renderFrame(state, { now: 6_000, width: 80, colors: plain }).join("\n");
    expect(text).toContain(
      "jobs:   waiting 2 · preparing 0 · for a slot 2\n        submitted 0 · Pending 1 · Running 1 · downloading 0",
    );
    expect(text).toContain("waiting: 2 jobs for a slot, 2 of 2 generations in flight (--concurrency 2)");
    expect(text).toContain("waiting: the service queues 1 task of this run (Pending)");
    expect(text).toContain("waiting 25 s: the service refuses new submissions for now");
    expect(text).toContain("paused: no credits left on the service; checking again in 55 s");
    // Past the wait, and once resumed, neither is said any more.
    applyEvent(state, { stage: "resumed" }, 40_000);
    const later = renderFrame(state, { now: 40_000, width: 80, colors: plain }).join("\n");
    expect(later).not.toMatch(/^waiting \d/m);
    expect(later).not.toContain("paused");
  });

  it("lists the jobs furthest along by name, with where they are and for how long, and how many more", () => {
    const events: [number, ProgressEvent][] = [];
    for (let i = 0; i < 8; i++) events.push([i * 1_000, job("preparing", `m/prep${i}`)]);
    events.push([2_000, job("submitting", "m/run")], [3_000, job("running", "m/run")]);
    events.push([4_000, job("downloading", "m/dl")]);
    const lines = renderFrame(stateOf(4, jobsOf(20, 0), events), { now: 10_000, width: 80, colors: plain });
    const listed = lines.filter((l) => /^ {2}\S/.test(l));
    expect(listed[0]).toMatch(/^ {2}m\/dl +downloading +6 s$/);
    expect(listed[1]).toMatch(/^ {2}m\/run +Running +7 s$/);
    expect(listed[2]).toMatch(/^ {2}m\/prep0 +preparing +10 s$/);
    expect(listed).toHaveLength(6);
    expect(listed[5]).toBe("  … and 5 more in flight");
  });

  it("shows files being hashed, uploaded (with bytes) and turned into speech", () => {
    const state = stateOf(4, jobsOf(3, 0), [
      [0, { stage: "hashing", asset: "/m/big.png" }],
      [0, { stage: "uploading", asset: "aa", detail: "face.png", bytes: 12_000_000 }],
      [0, { stage: "upload-bytes", asset: "aa", bytes: 3_200_000 }],
      [0, { stage: "uploading", asset: "bb", detail: "voice.wav", bytes: 1_000_000 }],
      [0, { stage: "uploaded", asset: "bb", detail: "voice.wav" }],
      [0, { stage: "speaking", asset: "speech:17:hi" }],
    ]);
    const text = renderFrame(state, { now: 1, width: 80, colors: plain }).join("\n");
    expect(text).toContain("files:  hashing 1 · uploading 1 (3.2/12.0 MB) · speech 1");
  });

  it("fits 80 columns whatever it holds, colours or not, long lines broken between words, not cut", () => {
    const long = `campaign-with-a-very-long-name/${"x".repeat(120)}`;
    const state = stateOf(16, jobsOf(123_456, 99_999, ["m/x"]), [
      [0, job("submitting", long)],
      [0, job("running", long)],
      [0, job("queued", `${long}2`)],
      [0, { stage: "waiting", ms: 99_000_000, detail: `retrying: ${"a long error message ".repeat(10)}` }],
      [0, { stage: "paused", detail: "the service rejects the API key ".repeat(5) }],
      [0, { stage: "uploading", asset: "a", bytes: 9_999_999_999 }],
      [0, job("failed", "m/x")],
    ]);
    for (const colors of [plain, colored]) {
      const lines = renderFrame(state, { now: 90_000_000, width: 80, colors });
      expect(lines.length).toBeGreaterThan(5);
      for (const line of lines) expect(visibleWidth(line)).toBeLessThan(80);
      // Every word of the long reasons is there, whole; a job's long name alone is cut (its column).
      const words = plainText(lines.join("\n")).split(/\s+/);
      expect(words.filter((w) => w === "message")).toHaveLength(10);
      expect(words.filter((w) => w === "rejects")).toHaveLength(5);
      expect(lines.some((l) => /^ {2}campaign-with-a-very-long-name\/x+… +Running/.test(l))).toBe(true);
    }
    // Colour only when asked: failures in red.
    expect(renderFrame(state, { now: 0, width: 80, colors: plain }).join("")).not.toContain("\x1b[");
    expect(renderFrame(state, { now: 0, width: 80, colors: colored })[1]).toContain(
      colored.red(colored.bold("1 failed")),
    );
  });

  it("counts a watch's manifests each from its last reading", () => {
    const state = makeLiveState(4, 0);
    const spring = (done: boolean[]) => done.map((d, i) => facts(`spring/${"abcd"[i]}`, d));
    applyEvent(state, { stage: "manifest", key: "spring", jobs: spring([false, false, false]) }, 0);
    applyEvent(state, job("done", "spring/a"), 1_000);
    applyEvent(
      state,
      { stage: "manifest", key: "fall", jobs: [facts("fall/x", true), facts("fall/y", true)] },
      1_500,
    );
    expect(renderFrame(state, { now: 2_000, width: 80, colors: plain, watching: true })[0]).toMatch(
      /3\/5 videos/,
    );
    // spring read again (a video added): its video done in this session is counted once, as this
    // session's; its failure of this session stays one when the engine says it is left as it is.
    applyEvent(state, job("failed", "spring/b"), 2_500);
    applyEvent(state, { stage: "manifest", key: "spring", jobs: spring([true, false, false, false]) }, 3_000);
    applyEvent(state, { stage: "ended-before", key: "spring/b", detail: "Fail" }, 3_000);
    const lines = renderFrame(state, { now: 3_000, width: 80, colors: plain, watching: true });
    expect(lines[0]).toMatch(/4\/6 videos/);
    expect(lines[1]).toMatch(/^this session: 1 done · 1 failed · 0 uncertain · 2 done before ·/);
    // A manifest gone: its jobs are no longer counted.
    applyEvent(state, { stage: "manifest", key: "fall", jobs: [] }, 4_000);
    expect(renderFrame(state, { now: 4_000, width: 80, colors: plain, watching: true })[0]).toMatch(
      /2\/4 videos/,
    );
    const empty = makeLiveState(4, 0);
    expect(renderFrame(empty, { now: 0, width: 80, colors: plain, watching: true })[0]).toMatch(
      /no videos yet$/,
    );
  });

  it("counts what a watch made of an edited video's earlier version as this session's work, once", () => {
    const state = makeLiveState(4, 0);
    const winter = (version: (i: number) => string, done: (i: number) => boolean) =>
      Array.from({ length: 3 }, (_, i) => ({ ...facts(`winter/v${i}`, done(i)), version: version(i) }));
    const head = (now: number) =>
      renderFrame(state, { now, width: 80, colors: plain, watching: true }).slice(0, 2).join("\n");
    applyEvent(
      state,
      {
        stage: "manifest",
        key: "winter",
        jobs: winter(
          () => "a",
          () => false,
        ),
      },
      0,
    );
    for (let i = 0; i < 3; i++) applyEvent(state, job("done", `winter/v${i}`), 1_000);
    // Two texts edited: new work for the bar; what was made of them stays this session's.
    const edited = (i: number) => (i < 2 ? "b" : "a");
    applyEvent(state, { stage: "manifest", key: "winter", jobs: winter(edited, (i) => i === 2) }, 2_000);
    expect(head(2_000)).toMatch(
      /1\/3 videos[^]*\nthis session: 3 done · 0 failed · 0 uncertain · 0 done before/,
    );
    applyEvent(state, job("done", "winter/v0"), 3_000);
    expect(head(3_000)).toMatch(/2\/3 videos[^]*\nthis session: 4 done ·/);
    // Edited back: the videos made in this session of that version are theirs again, counted once.
    applyEvent(
      state,
      {
        stage: "manifest",
        key: "winter",
        jobs: winter(
          () => "a",
          () => true,
        ),
      },
      4_000,
    );
    expect(head(4_000)).toMatch(/3\/3 videos\nthis session: 4 done · 0 failed · 0 uncertain · 0 done before/);
  });
});

describe("the lines off a terminal", () => {
  function collect() {
    const writes: string[] = [];
    return { writes, write: (text: string) => writes.push(text) };
  }

  it("aligns the parts of every line, says '1 job', and prints none of the live display's stages", () => {
    const out = collect();
    let t = 0;
    const sink = makeLineProgress(out, () => t);
    sink.start(1, 0);
    t = 1_500;
    sink.event({ stage: "uploaded", asset: "aa", detail: "media/face.png (sha256 0123456789ab)" });
    sink.event({ stage: "uploading", asset: "aa", detail: "media/face.png", bytes: 10 });
    sink.event({ stage: "queued", key: "m/a" });
    sink.event({ stage: "submitted", key: "m/a", detail: "task 1001" });
    sink.event({ stage: "note", detail: "watching in for *.yaml" });
    sink.event({ stage: "finished", key: "m", detail: "1 Success" });
    expect(out.writes.join("")).toBe(
      [
        "reel: 1 job, 0 already done",
        "[   1.5s] uploaded  media/face.png (sha256 0123456789ab)",
        "[   1.5s] submitted m/a task 1001",
        "[   1.5s] note      watching in for *.yaml",
        "[   1.5s] finished  m 1 Success",
        "",
      ].join("\n"),
    );
  });

  it("gives scripts (watch --json) the same events as objects, and no start line for a watch", () => {
    const out = collect();
    const sink = makeJsonProgress(out, () => 0);
    sink.start(0, 0);
    sink.event({ stage: "pending", key: "m/a" });
    sink.event({ stage: "failed", key: "m/a", detail: "boom" });
    expect(out.writes.map((w) => JSON.parse(w) as unknown)).toEqual([
      { at: "1970-01-01T00:00:00.000Z", event: "failed", key: "m/a", detail: "boom" },
    ]);
  });
});
