// The live status line on a terminal: its counts match what happened, and it fits the terminal's
// width (a wrapped line leaves its first part on screen at every redraw). The terminal is a stand-in
// that records what is written: the tests have no TTY.
import { describe, expect, it } from "vitest";
import { makeTtyProgress } from "../../src/engine/progress.js";

function terminal(columns: number) {
  const writes: string[] = [];
  return { writes, columns, write: (text: string) => writes.push(text) };
}

/** The status line as last drawn. */
const lastLine = (writes: string[]): string => writes.at(-1)!.replace("\r\x1b[2K", "");

describe("the terminal's status line", () => {
  it("counts as running only the jobs that run, until they end", () => {
    const t = terminal(200);
    const progress = makeTtyProgress(t);
    progress.start(3, 0);
    progress.event({ stage: "submitted", key: "m/bad" });
    progress.event({ stage: "submitted", key: "m/g1" });
    progress.event({ stage: "submitted", key: "m/g2" });
    progress.event({ stage: "running", key: "m/g1" });
    progress.event({ stage: "running", key: "m/g2" });
    progress.event({ stage: "failed", key: "m/bad", detail: "failed before it ran" });
    progress.stop();
    expect(t.writes.at(-2)).toMatch(/0\/3 done · 3 submitted · 2 running · 1 failed/);
    const again = terminal(200);
    const second = makeTtyProgress(again);
    second.start(1, 0);
    second.event({ stage: "running", key: "m/a" });
    second.event({ stage: "done", key: "m/a" });
    second.event({ stage: "done", key: "m/a" }); // told twice: never below zero
    second.stop();
    expect(again.writes.at(-2)).toMatch(/ 0 running /);
  });

  it("fits the terminal's width", () => {
    const t = terminal(40);
    const progress = makeTtyProgress(t);
    progress.start(10_000, 0);
    progress.stop();
    const line = lastLine(t.writes.slice(0, -1));
    expect(line.length).toBeLessThan(40);
    expect(line.endsWith("…")).toBe(true);
  });
});
