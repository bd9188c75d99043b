// Prices: the user's price list turns seconds of video into credits in `reel plan`, per
// manifest and in total, split into new, paid again on request, and already paid; a list with a
// mistake is refused at file:line:col. Real files, real runs on the sandbox over HTTP.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { runCli, writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";

const sandbox = useSandboxes();
const env = (s: Sandbox): Record<string, string> => ({ REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey });

const PRICES = "version: 1\nvideo:\n  actor-2: 1.5\n  avatar-h1: { 540p: 1, 720p: 2 }\nspeech: 0.25\n";

const MANIFEST = [
  "version: 1",
  "name: promo",
  "videos:",
  "  - id: a",
  "    model: actor-2",
  "    resolution: 720p",
  "    chunks: [{ duration: 10, text: hi }]",
  "  - id: b",
  "    model: avatar-h1",
  "    resolution: 720p",
  "    source: ./face.png",
  '    chunks: [{ duration: 5, speech: { voice: 17, text: "Hello" } }]',
  "  - id: c",
  "    model: actor-1",
  "    resolution: 720p",
  "    chunks: [{ duration: 5, text: hi }]",
].join("\n");

interface Spend {
  seconds: { new: number; retry: number; paid: number };
  credits?: { new: number; retry: number; paid: number; speech: number; prices: string };
  manifests: { name: string; credits?: { new: number } }[];
  unpriced: string[];
}

describe("prices in reel plan", () => {
  it("counts credits per manifest and in total from prices.yaml beside the state: new, then paid", async () => {
    const s = await sandbox();
    const dir = await tempDir();
    await writeTree(dir, {
      "promo.yaml": MANIFEST,
      "face.png": { fixture: "tiny.png" },
      "prices.yaml": PRICES,
    });
    const plan = async (): Promise<Spend> => {
      const run = await runCli(["plan", "--json", "promo.yaml"], { cwd: dir, env: env(s) });
      expect(run.code, run.stderr).toBe(0);
      return (JSON.parse(run.stdout) as { spend: Spend }).spend;
    };
    // a: 10 s x 1.5; b: 5 s x 2 at 720p, and one speech 0.25; c: actor-1 is not priced.
    expect(await plan()).toEqual({
      manifests: [
        {
          name: "promo",
          jobs: 3,
          seconds: { new: 20, retry: 0, paid: 0 },
          credits: { new: 25, retry: 0, paid: 0 },
        },
      ],
      seconds: { new: 20, retry: 0, paid: 0 },
      credits: { new: 25.25, retry: 0, paid: 0, speech: 0.25, prices: "prices.yaml" },
      unpriced: ["actor-1 at 720p"],
    });
    const text = await runCli(["plan", "promo.yaml"], { cwd: dir, env: env(s) });
    expect(text.stdout).toContain("spend per manifest (seconds of video; credits by prices.yaml)");
    expect(text.stdout).toMatch(/^ {2}total +3 +20 +0 +0 +25\.25 +0 +0$/m);
    expect(text.stdout).toContain("not priced, so not counted: actor-1 at 720p");

    expect((await runCli(["run", "promo.yaml"], { cwd: dir, env: env(s) })).code).toBe(0);
    expect(await plan()).toMatchObject({
      seconds: { new: 0, retry: 0, paid: 20 },
      credits: { new: 0, retry: 0, paid: 25, speech: 0 },
    });
  });

  it("counts an uncertain job as a retry only with --resubmit-uncertain, and takes --prices FILE", async () => {
    const s = await sandbox({ faults: { rate500AfterEffect: 1, routes: ["POST /v1/generations"] } });
    const dir = await tempDir();
    await writeTree(dir, {
      "promo.yaml":
        "version: 1\nname: promo\nvideos:\n  - id: a\n    model: actor-2\n    chunks: [{ duration: 10, text: hi }]\n",
      "lists/team.yaml": "version: 1\nvideo: { actor-2: 3 }\n",
    });
    expect((await runCli(["run", "promo.yaml"], { cwd: dir, env: env(s) })).code).toBe(1);
    const plan = async (...flags: string[]): Promise<Spend> => {
      const run = await runCli(["plan", "--json", "--prices", "lists/team.yaml", ...flags, "promo.yaml"], {
        cwd: dir,
        env: env(s),
      });
      expect(run.code, run.stderr).toBe(0);
      return (JSON.parse(run.stdout) as { spend: Spend }).spend;
    };
    expect((await plan()).credits).toMatchObject({ new: 0, retry: 0, paid: 0, prices: "lists/team.yaml" });
    expect((await plan("--resubmit-uncertain")).credits).toMatchObject({ new: 0, retry: 30, paid: 0 });
  });

  it("refuses a price list with a mistake, at file:line:col, before reading any state", async () => {
    const dir = await tempDir();
    await writeTree(dir, { "promo.yaml": MANIFEST, "face.png": { fixture: "tiny.png" } });
    await writeFile(
      join(dir, "prices.yaml"),
      "video:\n  actor-3: 1\n  avatar-h1: { 480p: 1, 720p: -2 }\nspeech: free\n",
    );
    const run = await runCli(["plan", "promo.yaml"], { cwd: dir, env: {} });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      [
        "reel plan: the price list cannot be used:",
        "prices.yaml:1:1: missing `version: 1` (the price list's format version)",
        'prices.yaml:2:3: unknown model "actor-3": the models are actor-1, actor-2, actor-4, avatar-h1, avatar-h1-pro',
        'prices.yaml:3:16: unknown resolution "480p": 540p, 720p, 1080p',
        "prices.yaml:3:31: avatar-h1 at 720p takes a number of credits from 0 up, not -2",
        'prices.yaml:4:9: speech takes a number of credits from 0 up, not "free"',
        "",
      ].join("\n"),
    );
  });
});
