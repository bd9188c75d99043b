// A run's start checks every job version of its manifests against the state file (recorded? sent by
// another state?) in one call each. Over 50,000 versions, with a real state file and the built code
// in a process of its own: the right versions found, and the process's peak RSS measured before
// and after the checks (what they add to it, not how long they take).
import { execFile } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { tempDir } from "../helpers/temp-dir.js";

const DIST = fileURLToPath(new URL("../../dist/", import.meta.url));

const CHECKER = `
const [dist, file, count, recordedJson] = process.argv.slice(1);
(await import(dist + "cli/heap.js")).tuneHeapForBatches(); // as reel runs
const { StateStore } = await import(dist + "state/sqlite/store.js");
const store = StateStore.open(file, { baseUrl: "http://127.0.0.1:9" });
const versions = Array.from({ length: Number(count) }, (_, i) => ({
  key: "big/v" + i,
  specHash: i.toString(16).padStart(64, "0"),
}));
const recorded = JSON.parse(recordedJson).map((i) => ({
  ...versions[i], manifest: "big", videoId: "v" + i, specJson: "{}", seconds: 5, model: "actor-2",
}));
await store.upsertJobs(recorded);
const before = process.resourceUsage().maxRSS;
const fresh = await store.notRecorded(versions);
const made = await store.madeSpecs(fresh.map((v) => v.specHash));
const unsent = await store.notSentAnywhere(versions);
const grownKb = process.resourceUsage().maxRSS - before;
await store.close();
process.stdout.write(JSON.stringify({ grownKb, fresh: fresh.map((v) => v.key), made: made.size, unsent: unsent.length }));
`;

it("checks 50,000 job versions against the state file adding less than 40 MB to the peak RSS", async () => {
  const COUNT = 50_000;
  // Recorded ones on either side of where a long list is cut, and far into it.
  const recorded = [3, 4_999, 5_000, 41_234];
  const dir = await tempDir();
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      CHECKER,
      DIST,
      join(dir, "state.db"),
      String(COUNT),
      JSON.stringify(recorded),
    ],
    { maxBuffer: 16 << 20 },
  );
  const { grownKb, fresh, made, unsent } = JSON.parse(stdout) as {
    grownKb: number;
    fresh: string[];
    made: number;
    unsent: number;
  };
  expect(fresh).toHaveLength(COUNT - recorded.length);
  expect(fresh.slice(0, 4)).toEqual(["big/v0", "big/v1", "big/v2", "big/v4"]);
  for (const i of recorded) expect(fresh).not.toContain(`big/v${i}`);
  expect(fresh.at(-1)).toBe(`big/v${COUNT - 1}`);
  expect(made).toBe(0); // none made yet
  expect(unsent).toBe(COUNT); // none sent
  // Before: about 52 MB, one JSON text of every version given to SQLite at once, and its parse.
  // Now about 30, most of it V8's young generation growing to its 16 MB.
  expect(grownKb / 1024).toBeLessThan(40);
});
