// OUT/results.jsonl as the tests read it: what a user's script would parse after a run.
import { readFile } from "node:fs/promises";
import { join } from "node:path";

/** The lines of `<dir>/<out>/results.jsonl`, parsed, in order. */
export async function readResults<T = Record<string, unknown>>(dir: string, out = "out"): Promise<T[]> {
  const text = await readFile(join(dir, out, "results.jsonl"), "utf8");
  return text
    .trim()
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as T);
}
