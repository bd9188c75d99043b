// A big run's peak memory is its start: the manifest read, validated and turned into jobs. Loaded here
// as `reel run` loads it (the built code, the CLI's heap tuning, in a process of its own), the
// process's peak RSS measured before and after: what the load adds to it, not how long it takes.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { writeTree } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp-dir.js";

const DIST = fileURLToPath(new URL("../../dist/", import.meta.url));

const LOADER = `
const dist = process.argv[1];
const { readingManifests, tuneHeapForBatches } = await import(dist + "cli/heap.js");
tuneHeapForBatches();
const { loadManifests } = await import(dist + "manifest/index.js");
const before = process.resourceUsage().maxRSS;
const { manifests, problems } = await readingManifests(() => loadManifests(["m.yaml"], { cwd: process.cwd() }));
const grown = process.resourceUsage().maxRSS - before;
process.stdout.write(JSON.stringify({ grownKb: grown, jobs: manifests[0]?.jobs.length, problems: problems.length }));
`;

it("loads a manifest of 20,000 videos into jobs adding less than 45 MB to the peak RSS", async () => {
  const VIDEOS = 20_000;
  const videos = Array.from(
    { length: VIDEOS },
    (_, i) => `  - id: v${i}\n    chunks:\n      - duration: 5\n        text: "take ${i} part 0"\n`,
  );
  const dir = await tempDir();
  await writeTree(dir, {
    "m.yaml": `version: 1\nname: big\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${videos.join("")}`,
  });

  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--input-type=module", "-e", LOADER, DIST],
    { cwd: dir },
  );
  const { grownKb, jobs, problems } = JSON.parse(stdout) as {
    grownKb: number;
    jobs: number;
    problems: number;
  };
  expect(problems).toBe(0);
  expect(jobs).toBe(VIDEOS);
  // The jobs themselves: about 9 MB. Before, 62 MB: V8's young generation grown to 32 MB while the
  // file was parsed, and the parsed file kept whole beside all of its jobs.
  expect(grownKb / 1024).toBeLessThan(45);
});
