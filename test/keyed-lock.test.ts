import { describe, expect, it } from "vitest";
import { makeKeyedLock } from "../src/keyed-lock.js";

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("makeKeyedLock", () => {
  it("runs the sections of one key one after another, in order, and lets other keys through", async () => {
    const lock = makeKeyedLock();
    const log: string[] = [];
    const section = (name: string) => async (): Promise<string> => {
      log.push(`${name} in`);
      await tick();
      log.push(`${name} out`);
      return name;
    };
    const results = await Promise.all([
      lock.run("a", section("a1")),
      lock.run("a", section("a2")),
      lock.run("b", section("b1")),
    ]);
    expect(results).toEqual(["a1", "a2", "b1"]);
    // a2 starts only once a1 ended; b1 did not wait for a1.
    expect(log.indexOf("a2 in")).toBeGreaterThan(log.indexOf("a1 out"));
    expect(log.indexOf("b1 in")).toBeLessThan(log.indexOf("a1 out"));
  });

  it("gives a section's error to its caller only, and goes on with the next", async () => {
    const lock = makeKeyedLock();
    const failed = lock.run("a", async () => {
      throw new Error("boom");
    });
    const next = lock.run("a", async () => "after");
    await expect(failed).rejects.toThrow("boom");
    await expect(next).resolves.toBe("after");
  });
});
