// A watcher paused for credits, as a user sees it: the real binary in a real pseudo-terminal, the
// sandbox over real HTTP refusing every generation with 402. Requests refused are not generations in
// flight: the display says it is paused, and counts none at the service.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { until } from "../helpers/cli.js";
import { usePty } from "../helpers/pty.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const reelInPty = usePty();

it("paused for credits: the 402-refused requests are not shown as generations in flight", async () => {
  const s = await sandbox({ credits: 0 });
  const dir = await tempDir();
  await mkdir(join(dir, "incoming"));
  const reel = reelInPty(["watch", "incoming", "--settle", "200ms", "--concurrency", "4"], dir, {
    REEL_BASE_URL: s.baseUrl,
    REEL_API_KEY: s.apiKey,
  });
  await until(async () => (await reel.screen()).includes("watching incoming"), "the watcher", 8_000);
  const videos = Array.from(
    { length: 6 },
    (_, i) => `  - id: v${i}\n    chunks:\n      - duration: 5\n        text: "take ${i}"\n`,
  ).join("");
  await writeFile(
    join(dir, "incoming", "c.yaml"),
    `version: 1\nname: c\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${videos}`,
  );
  // Four submissions, each refused with 402 (nothing created), then the pause (and, a second
  // later, one more try: a poll late on a busy machine may see five).
  await until(
    () => s.counters.requestCount("POST", "/v1/generations", 402) >= 4,
    "four submissions refused",
    8_000,
  );
  let screen = "";
  await until(
    async () => {
      screen = await reel.screen();
      return screen.includes("paused: no credits left");
    },
    "the pause on screen",
    8_000,
  );
  // A redraw after the pause (every 250 ms; its countdown changes): what stays on screen while it
  // lasts. Read as a redraw comes, not after a time: on a busy machine the pause's first check (1 s)
  // may come first, and then the next pause's redraw is the one read.
  const drawnAtPause = reel.raw().length;
  await until(
    async () => {
      if (reel.raw().length === drawnAtPause) return false;
      screen = await reel.screen();
      return screen.includes("paused: no credits left");
    },
    "a redraw of the paused display",
    15_000,
  );
  expect(screen).not.toContain("generations in flight");
  expect(screen).toMatch(
    /^jobs: +waiting 0 · preparing 0 · for a slot 6\n +submitted 0 · Pending 0 · Running 0 · downloading 0$/m,
  );
  expect(screen).not.toMatch(/c\/v\d +submitting/);
  expect(s.counters.generationsCreated).toBe(0);
  reel.type("\x03");
  expect(await reel.exit).toBe(0);
}, 30_000);
