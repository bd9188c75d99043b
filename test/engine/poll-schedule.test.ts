// The poll schedule: polls placed where the learned distribution says tasks end, few
// where none do, never further apart than the cap; the learned run times kept per model and
// resolution, recent tasks weighing more. What a user notices: a task that ends early is noticed
// early, a steady service is asked once or twice per task, a slow one is still asked within the cap.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { planPolls, type PollPlan } from "../../src/engine/poll-schedule.js";
import { RunTimes } from "../../src/engine/run-times.js";

const TIMING = { minMs: 20, maxMs: 10_000 };
const KEY = { model: "actor-2", resolution: "720p" };

/** Run times learned from tasks whose total per second of video was each of `msPerSecond`. */
function learned(msPerSecond: readonly number[]): RunTimes {
  const times = new RunTimes();
  for (const ms of msPerSecond) times.observe(KEY, ms * 10, 10);
  return times;
}

/** Polls a task that ends `endsAt` ms after its submission: when it is seen ended, and how many polls. */
function follow(plan: PollPlan, endsAt: number): { seenAt: number; polls: number; gaps: number[] } {
  let now = 0;
  const gaps: number[] = [];
  for (let polls = 1; polls < 10_000; polls++) {
    const gap = plan.next(now);
    gaps.push(gap);
    now += gap;
    if (now >= endsAt) return { seenAt: now, polls, gaps };
  }
  throw new Error("never seen");
}

/** `n` values spread evenly from `from` to `to`, in a mixed order (as tasks end in no order of length). */
const uniform = (from: number, to: number, n: number): number[] =>
  Array.from({ length: n }, (_, i) => from + ((to - from) * ((i * 17) % n)) / (n - 1));

describe("the poll schedule", () => {
  it("notices a task that ends early at once, and one that ends late within a tenth of the spread", () => {
    // Tasks of 10 s of video took 125 to 375 ms per second (2.5 s +-50%).
    const times = learned(uniform(125, 375, 40));
    const plan = () => planPolls(times.distribution(KEY), 10, TIMING);
    // sqrt(spread / median / cost): about 9 for a spread as wide as the median.
    expect(plan().planned.length).toBeGreaterThanOrEqual(7);
    expect(plan().planned.length).toBeLessThanOrEqual(10);
    const early = follow(plan(), 1_300);
    expect(early.seenAt - 1_300).toBeLessThan(300);
    expect(early.polls).toBe(1);
    const late = follow(plan(), 3_700);
    expect(late.seenAt - 3_700).toBeLessThan(300);
    // About (k + 1) / 2 polls for a task in the middle.
    expect(follow(plan(), 2_500).polls).toBeLessThanOrEqual(5);
  });

  it("asks a steady service once or twice per task", () => {
    const times = learned(uniform(249, 251, 20));
    const plan = planPolls(times.distribution(KEY), 10, TIMING);
    expect(plan.planned.length).toBeLessThanOrEqual(2);
    expect(follow(plan, 2_505).polls).toBeLessThanOrEqual(2);
  });

  it("never leaves a task unpolled longer than the cap, learned or not, early or late", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 1_000_000 }), { minLength: 0, maxLength: 30 }),
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 1, max: 50_000_000 }),
        (samples, seconds, endsAt) => {
          const plan = planPolls(learned(samples).distribution(KEY), seconds, TIMING);
          const { gaps } = follow(plan, endsAt);
          return gaps.every((gap) => gap >= TIMING.minMs && gap <= TIMING.maxMs);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("before anything is learned, waits half the time since the submission (within the bounds)", () => {
    const plan = planPolls(undefined, 10, TIMING);
    expect(plan.next(0)).toBe(20);
    expect(plan.next(1_000)).toBe(500);
    expect(plan.next(60_000)).toBe(10_000);
  });

  it("follows a service that slows down: recent tasks weigh more", () => {
    const times = learned([...uniform(100, 110, 60), ...uniform(300, 310, 30)]);
    const median = times.distribution(KEY)!.quantile(0.5);
    expect(median).toBeGreaterThan(290);
  });

  it("keeps what it learned per model and resolution, borrowing the model's until a key has its own", () => {
    const times = learned(uniform(200, 300, 10));
    const other = { model: "actor-2", resolution: "1080p" };
    expect(times.distribution(other)!.quantile(0.5)).toBeCloseTo(times.distribution(KEY)!.quantile(0.5));
    for (let i = 0; i < 5; i++) times.observe(other, 9_000, 10);
    expect(times.distribution(other)!.quantile(0.5)).toBe(900);
    // Videos of one length are planned from their own kind once two ended (a constant part of each
    // task's time weighs differently per second on another length).
    times.observe(other, 30 * 1_000, 30);
    times.observe(other, 30 * 1_000, 30);
    expect(times.distribution(other, 30)!.quantile(0.5)).toBe(1_000);
    expect(times.distribution(other, 10)!.quantile(0.5)).toBe(900);
    const again = RunTimes.fromJSON(times.toJSON());
    expect(again.distribution(other)!.quantile(0.5)).toBe(900);
    expect(again.distribution(KEY)!.quantile(1)).toBe(300);
    // A damaged or foreign record is learned again, not trusted.
    expect(RunTimes.fromJSON("{not json").distribution(KEY)).toBeUndefined();
    expect(RunTimes.fromJSON('{"format":2,"samples":{}}').distribution(KEY)).toBeUndefined();
  });

  it("takes a task seen ended between two polls at their middle", () => {
    const times = new RunTimes();
    times.observeEnd(KEY, 1_000, 5_000, 10);
    const last = JSON.parse(times.toJSON()) as { samples: Record<string, number[]> };
    expect(last.samples["actor-2@720p"]).toEqual([300]);
  });
});

describe("a long run of tasks that end before their first poll", () => {
  it("keeps polling at the floor when every first poll leaves late: lateness is not learned as run time", () => {
    // An instant service (the sandbox at time scale 0), and a busy process whose every poll leaves
    // 8 ms after its planned time. 20,000 tasks of 5 s of video, each seen ended at its first poll.
    const times = new RunTimes();
    const firstPoll = (): number => planPolls(times.distribution(KEY, 5), 5, TIMING).next(0);
    for (let i = 0; i < 20_000; i++) {
      const planned = firstPoll();
      times.observeEnd(KEY, 0, planned + 8, 5, planned);
    }
    // Where a task is first asked about after them: still near the floor (20 ms), not pushed later
    // by each late poll (it had climbed past a second).
    expect(firstPoll()).toBeLessThanOrEqual(2 * TIMING.minMs);
  });
});
