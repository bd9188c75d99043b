// `node scripts/screenshot-display.js` (after `npm run build`): runs the real binary in an 80-column
// pseudo-terminal against a slowed-down sandbox, reads the screen through a headless terminal
// emulator, and writes docs/display-80.txt: the live display mid-run (jobs running, queued at the
// service, waiting for a slot; a failure printed above), then the screen at the end.
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import xterm from "@xterm/headless";
import { startSandbox } from "../dist/sandbox/index.js";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const COLS = 80;
const ROWS = 24;

const videos = [
  ["intro", 8],
  ["product-close-up", 6],
  ["founder-message", 10],
  ["behind-the-scenes", 5],
  ["customer-story", 7],
  ["outro", 4],
]
  .map(
    ([id, seconds]) =>
      `  - id: ${id}\n    model: avatar-h1\n    resolution: 540p\n    source: ./media/face.png\n    chunks:\n      - duration: ${seconds}\n        speech: { voice: 17, text: "${id.replace(/-/g, " ")}" }\n`,
  )
  .join("");
const broken = `  - id: teaser\n    model: actor-2\n    resolution: 720p\n    chunks:\n      - duration: 5\n        text: "teaser"\n        audio: { asset: 99999999 }\n`;

const dir = mkdtempSync(join(tmpdir(), "reel-screenshot-"));
const sandbox = await startSandbox({
  timeScale: 0.35,
  preProcessingMs: 300,
  slots: 2,
  // Uploads and speech take a moment, as over a real network.
  faults: { latencyMs: 600, routes: ["POST /v1/assets", "POST /v1/audios"] },
});
try {
  mkdirSync(join(dir, "media"));
  copyFileSync(join(ROOT, "test/sandbox/fixtures/tiny.png"), join(dir, "media/face.png"));
  writeFileSync(join(dir, "spring.yaml"), `version: 1\nname: spring\nvideos:\n${broken}${videos}`);
  const term = new xterm.Terminal({ cols: COLS, rows: ROWS, allowProposedApi: true });
  const screen = () =>
    new Promise((resolve) =>
      term.write("", () => {
        const b = term.buffer.active;
        const lines = [];
        for (let i = b.viewportY; i < b.viewportY + ROWS; i++)
          lines.push(b.getLine(i).translateToString(true));
        while (lines.length > 0 && lines.at(-1) === "") lines.pop();
        resolve(lines.join("\n"));
      }),
    );
  const reel = spawn(
    "script",
    [
      "-qfec",
      `stty cols ${COLS} rows ${ROWS}; exec node ${join(ROOT, "bin/reel.js")} run --concurrency 3 spring.yaml`,
      "/dev/null",
    ],
    {
      cwd: dir,
      env: {
        PATH: process.env.PATH,
        TERM: "xterm-256color",
        REEL_BASE_URL: sandbox.baseUrl,
        REEL_API_KEY: sandbox.apiKey,
      },
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  reel.stdout.on("data", (d) => term.write(d));
  // The frame mid-run that shows the most of the display (jobs at the service, a task queued there,
  // jobs waiting for a slot, an ETA): the first that shows all, else the one that shows the most.
  const shows = [/(submitted|Running) [1-9]/, /queues/, /for a slot,/, /ETA \d/];
  let during;
  let best = 0;
  let ended = false;
  const exited = new Promise((resolve) => reel.on("exit", resolve)).then(() => (ended = true));
  const deadline = Date.now() + 30_000;
  while (best < shows.length && !ended && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    const now = await screen();
    const score = shows.filter((pattern) => pattern.test(now)).length;
    if (score > best && /(submitted|Running) [1-9]/.test(now)) [during, best] = [now, score];
  }
  await exited;
  const end = await screen();
  const text = [
    "reel run, 80 columns: the live display during the run",
    "-".repeat(COLS),
    during ?? "(not caught)",
    "",
    "and the screen at the end",
    "-".repeat(COLS),
    end,
    "",
  ].join("\n");
  writeFileSync(join(ROOT, "docs/display-80.txt"), text);
  console.log(text);
} finally {
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
}
