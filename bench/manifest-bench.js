// Validating and planning a manifest of 10,000 videos: wall time and peak memory (the target:
// under 2 s and under 200 MB); and the same for one matrix video that expands to 10,000;
// and 60 such templates (600,000 videos), refused by the video limit before anything is expanded;
// and a campaign from a spreadsheet: one video with `rows:` of a CSV of 100,000 rows (aim: under
// 3 s and 400 MB). Run after a build: `npx tsc -p tsconfig.build.json && node bench/manifest-bench.js`.
// The measured work runs in a child process so that its peak RSS is its own.
//   node bench/manifest-bench.js --against OTHER/dist [--only leads.yaml] [--rounds 3]
// runs another build (e.g. main's) and this one alternately in the same run, side by side: on a
// busy machine only figures taken together compare (CPU time is steadier than wall time).
import { spawnSync } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const VIDEOS = 10_000;
const REPO = fileURLToPath(new URL("..", import.meta.url));

/** One video of each kind in turn: all five models, shared media files, speech, defaults. */
function videoYaml(i) {
  const id = `video-${String(i).padStart(5, "0")}`;
  switch (i % 5) {
    case 0:
      return `  - id: ${id}\n    chunks:\n      - duration: 5\n        text: "Scene ${i}: a barista waves hello."\n`;
    case 1:
      return `  - id: ${id}\n    model: actor-1\n    source: ./media/host.jpg\n    chunks:\n      - duration: 10\n        text: "Take ${i}"\n        audio: ./media/intro.mp3\n      - duration: 5\n        text: "and smiles"\n`;
    case 2:
      return `  - id: ${id}\n    model: actor-4\n    resolution: 540p\n    chunks:\n      - duration: 5\n        text: "Petals ${i}"\n        speech: { voice: ${i % 7}7, text: "Line number ${i}." }\n`;
    case 3:
      return `  - id: ${id}\n    model: avatar-h1\n    resolution: 540p\n    aspectRatio: "1:1"\n    source: ./media/face.png\n    chunks:\n      - duration: ${(i % 60) + 1}\n        audio: ./media/greeting.wav\n`;
    default:
      return `  - id: ${id}\n    model: avatar-h1-pro\n    resolution: 720p\n    source: { asset: ${1000 + i} }\n    chunks:\n      - duration: 30\n        text: "nods"\n        speech: { voice: 17, text: "Welcome, guest ${i}." }\n`;
  }
}

/** One template of 100 x 100 combinations: a mapping axis (voice and line) and a path per face. */
function matrixYaml() {
  const langs = Array.from(
    { length: 100 },
    (_, i) => `        - { lang: l${i}, voice: ${i + 1}, line: "Line ${i}, spoken." }\n`,
  ).join("");
  const faces = Array.from({ length: 100 }, (_, i) => `f${i}`).join(", ");
  return `  - id: promo-{lang}-{face}\n    matrix:\n      lang:\n${langs}      face: [${faces}]\n    model: avatar-h1\n    resolution: 540p\n    source: ./media/face.png\n    chunks:\n      - duration: 5\n        text: "{face} smiles"\n        speech: { voice: "{voice}", text: "{line}" }\n`;
}

/** 60 templates of 100 x 100: 600,000 videos in about 70 KB, over the default limit. */
function overLimitYaml() {
  const list = (p) => `[${Array.from({ length: 100 }, (_, i) => `${p}${i}`).join(", ")}]`;
  const template = (t) =>
    `  - id: p${t}-{a}-{b}\n    matrix:\n      a: ${list("a")}\n      b: ${list("b")}\n    chunks:\n      - duration: 5\n        text: "{a} and {b}"\n`;
  const head = "version: 1\nname: over\ndefaults: { model: actor-2, resolution: 720p }\nvideos:\n";
  return head + Array.from({ length: 60 }, (_, t) => template(t)).join("");
}

const ROWS = 100_000;

/** A spreadsheet of leads: an id, a name, a voice and a year per row. */
function leadsCsv() {
  const lines = ["lead_id,first_name,voice,year"];
  for (let i = 0; i < ROWS; i++) lines.push(`${100000 + i},Name${i},${(i % 30) + 1},${2020 + (i % 7)}`);
  return `${lines.join("\n")}\n`;
}

/** One video per row of leads.csv: speech with the row's voice and name, a shared face. */
const ROWS_YAML = `version: 1
name: leads
defaults: { model: avatar-h1, resolution: 540p }
videos:
  - id: welcome-{lead_id}
    rows: ./leads.csv
    source: ./media/face.png
    chunks:
      - duration: 5
        speech: { voice: "{voice}", text: "Hi {first_name}, see you in {year}." }
`;

async function child(dir, file, dist) {
  const { loadManifests, makePlan } = await import(
    pathToFileURL(path.join(dist, "manifest", "index.js")).href
  );
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const loaded = await loadManifests([file], { cwd: dir });
  const t1 = performance.now();
  const plan = makePlan(loaded.manifests);
  const t2 = performance.now();
  const cpu = process.cpuUsage(cpu0);
  const refused = file === "over.yaml";
  if (refused && loaded.problems.map((p) => p.code).join() !== "E_TOO_MANY_VIDEOS")
    throw new Error(`expected the video limit's refusal: ${JSON.stringify(loaded.problems.slice(0, 3))}`);
  if (!refused && loaded.problems.length > 0)
    throw new Error(`unexpected problems: ${JSON.stringify(loaded.problems.slice(0, 3))}`);
  process.stdout.write(
    JSON.stringify({
      loadMs: t1 - t0,
      planMs: t2 - t1,
      cpuMs: (cpu.user + cpu.system) / 1000,
      videos: plan.videos,
      seconds: plan.seconds,
      uploads: plan.uploads.new.length,
      speech: plan.speech.new.length,
      peakRssMb: process.resourceUsage().maxRSS / 1024,
    }),
  );
}

async function main() {
  const dir = await mkdtemp(path.join(tmpdir(), "reel-manifest-bench-"));
  try {
    await mkdir(path.join(dir, "media"));
    const media = path.join(REPO, "manifests", "media");
    for (const name of await readdir(media))
      await copyFile(path.join(media, name), path.join(dir, "media", name));
    const head =
      'version: 1\nname: bench\ndefaults:\n  model: actor-2\n  resolution: 720p\n  aspectRatio: "16:9"\nvideos:\n';
    const body = Array.from({ length: VIDEOS }, (_, i) => videoYaml(i)).join("");
    await writeFile(path.join(dir, "big.yaml"), head + body);
    await writeFile(path.join(dir, "matrix.yaml"), `version: 1\nname: matrix\nvideos:\n${matrixYaml()}`);
    await writeFile(path.join(dir, "over.yaml"), overLimitYaml());
    await writeFile(path.join(dir, "leads.csv"), leadsCsv());
    await writeFile(path.join(dir, "leads.yaml"), ROWS_YAML);

    const cases = [
      ["big.yaml", `a manifest of ${VIDEOS} videos`],
      ["matrix.yaml", "one matrix video of 100 x 100 combinations"],
      ["over.yaml", "60 matrix videos of 100 x 100 (600,000 videos), refused by the limit"],
      ["leads.yaml", `one video with rows: of a CSV of ${ROWS.toLocaleString("en-US")} rows`],
    ].filter(([file]) => only === undefined || only === file);
    const builds = against === undefined ? [OWN_DIST] : [against, OWN_DIST];
    for (const [file, title] of cases) {
      const big = file === "leads.yaml";
      const bytes = (await readFile(path.join(dir, file))).length;
      // Each build `rounds` times, alternately; the median of each figure.
      const runs = builds.map(() => []);
      for (let round = 0; round < rounds; round++)
        builds.forEach((dist, b) => runs[b].push(measure(dir, file, dist)));
      const r = runs.map((list) => {
        const median = (key) => list.map((x) => x[key]).sort((x, y) => x - y)[Math.floor(list.length / 2)];
        return {
          ...list[0],
          ...Object.fromEntries(
            ["loadMs", "planMs", "cpuMs", "wallMs", "peakRssMb"].map((k) => [k, median(k)]),
          ),
        };
      });
      const each = (f) => r.map(f).join("  |  ");
      const rows = [
        ["manifest", `${(bytes / 1024 / 1024).toFixed(2)} MB of YAML`],
        [
          "plan",
          each((x) => `${x.videos} jobs, ${x.seconds} s of video, ${x.uploads} uploads, ${x.speech} speech`),
        ],
        ["loadManifests", each((x) => `${x.loadMs.toFixed(0)} ms`)],
        ["makePlan", each((x) => `${x.planMs.toFixed(0)} ms`)],
        [
          "load + plan",
          `${each((x) => `${(x.loadMs + x.planMs).toFixed(0)} ms`)} (aim < ${big ? 3000 : 2000} ms)`,
        ],
        ["CPU of load + plan", each((x) => `${x.cpuMs.toFixed(0)} ms`)],
        [
          "child process wall",
          `${each((x) => `${x.wallMs.toFixed(0)} ms`)} (with Node start-up and imports)`,
        ],
        ["peak RSS", `${each((x) => `${x.peakRssMb.toFixed(0)} MB`)} (aim < ${big ? 400 : 200} MB)`],
      ];
      console.log(`manifest bench: validate + plan ${title}`);
      if (against !== undefined)
        console.log(`  ${"".padEnd(20)} ${against}  |  this build (median of ${rounds})`);
      for (const [k, v] of rows) console.log(`  ${k.padEnd(20)} ${v}`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function measure(dir, file, dist) {
  const started = performance.now();
  const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--child", dir, file, dist], {
    encoding: "utf8",
  });
  const wallMs = performance.now() - started;
  if (run.status !== 0) throw new Error(`bench child failed:\n${run.stderr}`);
  return { ...JSON.parse(run.stdout), wallMs };
}

const OWN_DIST = path.join(REPO, "dist");
const option = (name) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
};
const against = option("--against") && path.resolve(option("--against"));
const only = option("--only");
const rounds = Number(option("--rounds") ?? 1);

if (process.argv[2] === "--child") await child(process.argv[3], process.argv[4], process.argv[5] ?? OWN_DIST);
else await main();
