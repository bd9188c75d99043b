// The ETA as a pure function (src/display/eta.ts) of what was learned of the run times, the tasks in
// flight, the jobs left and the bound: per second of video, longest first into the slot that frees
// first, a task in flight by what the tasks that outlasted its age took, a straggler never frozen.
import { describe, expect, it } from "vitest";
import { type EtaInput, remainingMs } from "../../src/display/eta.js";
import { RunTimes } from "../../src/engine/run-times.js";

const KEY = { model: "actor-2", resolution: "720p" };

/** Learned: tasks of `seconds` that took `ms` each. */
function learned(seconds: number, ...ms: number[]): RunTimes {
  const times = new RunTimes();
  for (const m of ms) times.observe(KEY, m, seconds);
  return times;
}

const job = (seconds: number) => ({ key: KEY, seconds });
const task = (seconds: number, ageMs: number) => ({ key: KEY, seconds, ageMs });

function eta(input: Partial<EtaInput> & Pick<EtaInput, "learned">): number | undefined {
  return remainingMs({ inFlight: [], queue: [], concurrency: 2, ...input });
}

describe("the ETA", () => {
  it("is unknown while nothing is learned, and 0 when nothing is left", () => {
    expect(eta({ learned: new RunTimes(), queue: [job(10)] })).toBeUndefined();
    expect(eta({ learned: new RunTimes(), inFlight: [task(10, 500)] })).toBeUndefined();
    expect(eta({ learned: learned(10, 1_000, 1_000) })).toBe(0);
  });

  it("counts the jobs left per second of video, as many at a time as the bound lets", () => {
    // 100 ms per second of video. Four 10 s videos two at a time: two rounds of 1 s.
    const times = learned(10, 1_000, 1_000);
    expect(eta({ learned: times, queue: [job(10), job(10), job(10), job(10)] })).toBeCloseTo(2_000);
    expect(eta({ learned: times, queue: [job(10), job(10), job(10), job(10)], concurrency: 4 })).toBeCloseTo(
      1_000,
    );
    // A 5 s video takes half a 10 s one.
    expect(eta({ learned: times, queue: [job(5), job(5)] })).toBeCloseTo(500);
  });

  it("lays the jobs out longest first, each into the slot that frees first, as the engine sends them", () => {
    const times = learned(10, 1_000, 1_000);
    // 10 s on one slot; 5 s and 5 s on the other: 1 s (shortest first would end at 1.5 s).
    expect(eta({ learned: times, queue: [job(5), job(5), job(10)] })).toBeCloseTo(1_000);
    // A task in flight holds its slot until its end: the 10 s job waits for the one that frees first.
    expect(eta({ learned: times, inFlight: [task(10, 800), task(10, 100)], queue: [job(10)] })).toBeCloseTo(
      1_200,
    );
  });

  it("gives a task in flight what the tasks that outlasted its age took, less its age", () => {
    const times = learned(10, 800, 1_000, 1_200);
    // At 900 ms, the tasks that outlasted it took 1 000 and 1 200 ms (recent ones weigh a little more).
    const left = eta({ learned: times, inFlight: [task(10, 900)] })!;
    expect(left).toBeGreaterThan(150);
    expect(left).toBeLessThan(250);
    // Younger, it has more to go: the mean of all, less its age.
    expect(eta({ learned: times, inFlight: [task(10, 100)] })!).toBeGreaterThan(850);
  });

  it("never stands still or says nothing is left while a task runs late: a straggler gets more the later it is", () => {
    const times = learned(10, 800, 1_000, 1_200);
    const at = (age: number) => eta({ learned: times, inFlight: [task(10, age)] })!;
    expect(at(1_200)).toBeGreaterThan(0);
    expect(at(1_500)).toBeGreaterThan(at(1_300));
    expect(at(3_000)).toBeGreaterThan(at(1_500));
    // Counting down to its expected end, it moves with the clock.
    expect(at(400) - at(500)).toBeCloseTo(100);
  });

  it("lets the jobs left start only once fewer tasks than the bound are in flight", () => {
    const times = learned(10, 1_000, 1_000);
    // Three in flight on a bound of 2 (a rerun with a lower --concurrency): the job left starts when
    // the second of them ends (at 0.5 s), not the first (0.1 s).
    const inFlight = [task(10, 900), task(10, 500), task(10, 0)];
    expect(eta({ learned: times, inFlight, queue: [job(10)] })).toBeCloseTo(1_500);
  });

  it("adds the run's overhead (the submission, the end noticed at a poll) in proportion to each task's time", () => {
    const times = learned(10, 1_000, 1_000);
    expect(eta({ learned: times, queue: [job(10), job(10)], concurrency: 1, overhead: 0.1 })).toBeCloseTo(
      2_200,
    );
  });

  it("counts downloads once one of the run ended, as long as it took", () => {
    const times = learned(10, 1_000, 1_000);
    expect(eta({ learned: times, downloading: [100] })).toBeUndefined();
    expect(eta({ learned: times, downloading: [100], downloadMs: 400 })).toBeCloseTo(300);
    // After the last task, its download.
    expect(eta({ learned: times, queue: [job(10)], downloadMs: 400 })).toBeCloseTo(1_400);
    // A download past the time they take still has something left, more the later it is.
    const late = (age: number) => eta({ learned: times, downloading: [age], downloadMs: 400 })!;
    expect(late(600)).toBeGreaterThan(0);
    expect(late(900)).toBeGreaterThan(late(600));
  });
});
