// The ETA a user reads, against the time the run then really took: the real binary in a real
// pseudo-terminal, on a sandbox whose run times vary (+-30%, drawn per video), nothing learned before
// the run. Videos of 10 s and of 5 s: the long ones go first, so the half still to make is of short
// ones, which take half as long (per second of video, not per video). The ETA says it is learning
// until tasks ended, then moves with the clock, and at the half-way point lands within 25% of the
// time left (or 400 ms, this test's own reading of the screen being that coarse on a busy machine).
import { expect, it } from "vitest";
import { until, writeTree } from "../helpers/cli.js";
import { usePty } from "../helpers/pty.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const reelInPty = usePty();

/** "2.6 s", "42 s", "1 min 5 s" in milliseconds. */
function durationMs(text: string): number {
  const m = /^(?:(\d+) min)? ?(?:([\d.]+) s)?$/.exec(text.trim());
  if (!m || (m[1] === undefined && m[2] === undefined)) throw new Error(`not a duration: ${text}`);
  return (Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0)) * 1000;
}

it("says 'learning', then shows an ETA that moves with the clock and lands within 25% at the half-way point", async () => {
  // 12 videos, 2 at a time: 10 s of video run 1 s, 5 s run 0.5 s (+-30%); the run about 4.5 s.
  const s = await sandbox({ timeScale: 0.1, jitter: 0.3, seed: 1 });
  const dir = await tempDir();
  const videos = Array.from(
    { length: 12 },
    (_, i) =>
      `  - id: v${i}\n    chunks:\n      - duration: ${i % 2 === 0 ? 10 : 5}\n        text: "video ${i}"\n`,
  ).join("");
  await writeTree(dir, {
    "m.yaml": `version: 1\nname: m\ndefaults:\n  model: actor-2\n  resolution: 720p\nvideos:\n${videos}`,
  });
  const reel = reelInPty(["run", "--concurrency", "2", "m.yaml"], dir, {
    REEL_BASE_URL: s.baseUrl,
    REEL_API_KEY: s.apiKey,
  });
  let eta: string | undefined;
  let half = 0;
  /** Each ETA shown (with the videos ended), and how long it stood. */
  const etas: { label: string; since: number; stood: number }[] = [];
  await until(
    async () => {
      const bar = /(\d+)\/12 videos(?: · ETA (.+))?$/m.exec(await reel.screen());
      const now = performance.now();
      if (bar?.[2] !== undefined) {
        const label = `${bar[1]}/12: ${bar[2]}`;
        const last = etas.at(-1);
        if (last?.label === label) last.stood = now - last.since;
        else etas.push({ label, since: now, stood: 0 });
      }
      if (eta === undefined && bar && Number(bar[1]) >= 6 && bar[2] !== undefined) {
        eta = bar[2];
        half = now;
      }
      return bar?.[1] === "12";
    },
    "the run's end",
    15_000,
  );
  const left = performance.now() - half;
  expect(await reel.exit).toBe(0);
  const seen = etas.map((e) => `${e.label} (${Math.round(e.stood)} ms)`).join("\n");
  // Nothing learned before the first tasks end; then an estimate that moves with the clock.
  expect(etas[0]?.label, seen).toBe("0/12: learning");
  for (const e of etas.filter((e) => !e.label.endsWith("learning")))
    expect(e.stood, seen).toBeLessThan(1_000);
  expect(eta, seen).toMatch(/\d/);
  const shown = durationMs(eta!);
  // Within 25% of what was left, or 400 ms: this test sees the screen from a worker sharing two cores
  // with other test files, and the moment it reads the half-way ETA can trail its drawing by a few
  // hundred ms, a quarter of the 1.5 s then left (CI once saw 1.8 s shown for 1.43 s measured).
  expect(Math.abs(shown - left), `ETA ${eta} at the half-way point, ${left} ms left`).toBeLessThan(
    Math.max(0.25 * left, 400),
  );
}, 30_000);
