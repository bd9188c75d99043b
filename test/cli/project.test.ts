// The state belongs to the project, not to the folder the shell is in: real runs against
// the sandbox over HTTP, from several folders, with real state files, project files and outputs.
// The money line of each test: the sandbox's own count of generations made.
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Sandbox } from "../../src/sandbox/index.js";
import { runCli, useCommands, writeTree } from "../helpers/cli.js";
import { usePostgres } from "../helpers/postgres.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { until } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp-dir.js";
import { expectServedVideo, isServedVideo } from "../helpers/videos.js";
import { shownPath } from "../../src/user-path.js";

const sandbox = useSandboxes();
const startCommand = useCommands();
const database = usePostgres();

const PROMO = `version: 1
name: promo
defaults:
  model: actor-2
  resolution: 720p
videos:
  - id: teaser
    chunks:
      - duration: 5
        text: "a mug on a table"
  - id: trailer
    chunks:
      - duration: 5
        text: "a lamp turns on"
`;

const env = (s: Sandbox): Record<string, string> => ({ REEL_BASE_URL: s.baseUrl, REEL_API_KEY: s.apiKey });

/** run's first line: which state and output folder, and why. */
const firstLine = (stderr: string): string => stderr.split("\n")[0] ?? "";

describe("the state is the project's", () => {
  it("a run from another folder uses the project's state and output: nothing is paid twice", async () => {
    const s = await sandbox();
    const root = await tempDir();
    const project = join(root, "project");
    await writeTree(project, { "reel.yaml": "version: 1\n", "manifests/promo.yaml": PROMO });
    await mkdir(join(root, "elsewhere"));

    const first = await runCli(["run", "manifests"], { cwd: project, env: env(s) });
    expect(first.code, first.stderr).toBe(0);
    expect(firstLine(first.stderr)).toBe(
      "reel run: state .reel/state.db (new) · out out · project reel.yaml",
    );
    expect(s.counters.generationsCreated).toBe(2);

    // The same manifest from a sibling folder: the same state, so every job is done already.
    const again = await runCli(["run", "../project/manifests/promo.yaml"], {
      cwd: join(root, "elsewhere"),
      env: env(s),
    });
    expect(again.code, again.stderr).toBe(0);
    expect(firstLine(again.stderr)).toBe(
      `reel run: state ${join(project, ".reel", "state.db")} · out ${join(project, "out")} · project ${join(project, "reel.yaml")}`,
    );
    expect(s.counters.generationsCreated).toBe(2);
    expect(existsSync(join(root, "elsewhere", ".reel"))).toBe(false);
    expect(existsSync(join(root, "elsewhere", "out"))).toBe(false);
  });

  it("without a project file, finds the state an earlier run left above the manifests", async () => {
    const s = await sandbox();
    const root = await tempDir();
    await writeTree(root, { "work/manifests/promo.yaml": PROMO });
    await mkdir(join(root, "other"));
    expect((await runCli(["run", "manifests"], { cwd: join(root, "work"), env: env(s) })).code).toBe(0);
    expect(existsSync(join(root, "work", ".reel", "state.db"))).toBe(true);

    const again = await runCli(["run", "../work/manifests/promo.yaml", "--json"], {
      cwd: join(root, "other"),
      env: env(s),
    });
    expect(again.code).toBe(0);
    expect(firstLine(again.stderr)).toContain("found above the manifests");
    const summary = JSON.parse(again.stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({
      state: join(root, "work", ".reel", "state.db"),
      out: join(root, "work", "out"),
      project: null,
      anchor: { dir: join(root, "work"), kind: "state" },
    });
    expect(s.counters.generationsCreated).toBe(2);
  });

  it("a first run from a folder that does not hold the manifests puts the state beside them", async () => {
    const s = await sandbox();
    const root = await tempDir();
    await writeTree(root, { "campaign/promo.yaml": PROMO });
    await mkdir(join(root, "shell"));
    const run = await runCli(["run", "../campaign/promo.yaml"], { cwd: join(root, "shell"), env: env(s) });
    expect(run.code).toBe(0);
    expect(existsSync(join(root, "campaign", ".reel", "state.db"))).toBe(true);
    expect(existsSync(join(root, "campaign", "out", "promo", "teaser.mp4"))).toBe(true);
    expect(existsSync(join(root, "shell", ".reel"))).toBe(false);
    // And from the manifests' own folder later: the same state.
    expect((await runCli(["run", "promo.yaml"], { cwd: join(root, "campaign"), env: env(s) })).code).toBe(0);
    expect(s.counters.generationsCreated).toBe(2);
  });

  it("refuses to pass over a state in the current folder (the old default) that has work of these manifests", async () => {
    const s = await sandbox();
    const root = await tempDir();
    await writeTree(root, { "campaign/promo.yaml": PROMO });
    const shell = join(root, "shell");
    await mkdir(shell);
    // As reel ran before projects: the state and out under the current folder.
    const old = await runCli(["run", "../campaign/promo.yaml", "--state", ".reel/state.db", "--out", "out"], {
      cwd: shell,
      env: env(s),
    });
    expect(old.code).toBe(0);
    expect(s.counters.generationsCreated).toBe(2);

    const now = await runCli(["run", "../campaign/promo.yaml"], { cwd: shell, env: env(s) });
    expect(now.code).toBe(2);
    expect(now.stderr).toContain("has work of 'promo'");
    expect(now.stderr).toContain("--state .reel/state.db --out out");
    expect(s.counters.generationsCreated).toBe(2);
    expect(existsSync(join(root, "campaign", ".reel", "state.db"))).toBe(false);
  });

  it("refuses manifests whose own folder has a state of its own, inside a folder run as a whole", async () => {
    const s = await sandbox();
    const root = await tempDir();
    await writeTree(root, { "campaigns/spring/promo.yaml": PROMO });
    const spring = join(root, "campaigns", "spring");
    expect((await runCli(["run", "."], { cwd: spring, env: env(s) })).code).toBe(0);

    const whole = await runCli(["run", "campaigns"], { cwd: root, env: env(s) });
    expect(whole.code).toBe(2);
    expect(whole.stderr).toContain(
      "campaigns/spring/promo.yaml belongs to the state campaigns/spring/.reel/state.db",
    );
    expect(s.counters.generationsCreated).toBe(2);
  });

  it("refuses manifests of two projects in one run, naming both", async () => {
    const s = await sandbox();
    const root = await tempDir();
    await writeTree(root, {
      "a/reel.yaml": "version: 1\n",
      "a/promo.yaml": PROMO,
      "b/reel.yaml": "version: 1\n",
      "b/other.yaml": PROMO.replace("name: promo", "name: other"),
    });
    const run = await runCli(["run", "a/promo.yaml", "b/other.yaml"], { cwd: root, env: env(s) });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("belong to different projects");
    expect(run.stderr).toContain("the project a/reel.yaml");
    expect(run.stderr).toContain("the project b/reel.yaml");
    expect(s.counters.requests.size).toBe(0);
  });
});

describe("a project inside the folder of another", () => {
  const OTHER = PROMO.replace("name: promo", "name: other");

  /** `reel init top`, then 4 videos of top/campaign/manifests run with top's state. */
  async function ranWithTopState(s: Sandbox): Promise<{ root: string; top: string; campaign: string }> {
    const root = await tempDir();
    expect((await runCli(["init", "top"], { cwd: root, env: {} })).code).toBe(0);
    const top = join(root, "top");
    const campaign = join(top, "campaign");
    await writeTree(campaign, { "manifests/promo.yaml": PROMO, "manifests/other.yaml": OTHER });
    const run = await runCli(["run", "top/campaign/manifests"], { cwd: root, env: env(s) });
    expect(run.code, run.stderr).toBe(0);
    expect(firstLine(run.stderr)).toContain("project top/reel.yaml");
    expect(s.counters.generationsCreated).toBe(4);
    return { root, top, campaign };
  }

  it("reel init refuses a folder whose manifests the state above has run, and writes nothing", async () => {
    const s = await sandbox();
    const { root, campaign } = await ranWithTopState(s);
    const init = await runCli(["init", "top/campaign"], { cwd: root, env: {} });
    expect(init.code).toBe(2);
    expect(init.stderr).toContain("top/.reel/state.db");
    expect(init.stderr).toContain("'other', 'promo'");
    expect(existsSync(join(campaign, "reel.yaml"))).toBe(false);
    expect(existsSync(join(campaign, "manifests", "example.yaml"))).toBe(false);
    // The manifests stay top's: a run from their own folder pays for nothing.
    const again = await runCli(["run", "manifests"], { cwd: campaign, env: env(s) });
    expect(again.code, again.stderr).toBe(0);
    expect(s.counters.generationsCreated).toBe(4);
  });

  it("a run whose new project would pass over the state above that ran its manifests is refused, from any folder, with the fix", async () => {
    const s = await sandbox();
    const { root, top, campaign } = await ranWithTopState(s);
    // A project file written by hand (or by an older reel init) inside top's folder.
    await writeFile(join(campaign, "reel.yaml"), "version: 1\n");
    for (const [cwd, path, known] of [
      [root, "top/campaign/manifests", "'other', 'promo'"],
      [campaign, "manifests", "'other', 'promo'"],
      [join(campaign, "manifests"), "promo.yaml", "'promo'"],
    ] as const) {
      const run = await runCli(["run", path], { cwd, env: env(s) });
      expect(run.code, `${cwd}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toContain(`.reel/state.db above has work of ${known}, but`);
      expect(run.stderr).toContain(`--state ${shownPath(cwd, join(top, ".reel", "state.db"))}`);
      expect(run.stderr).toContain("running on would pay for that work again");
    }
    expect(s.counters.generationsCreated).toBe(4);
    expect(existsSync(join(campaign, ".reel", "state.db"))).toBe(false);

    // The fix it names: the state above, given.
    const fixed = await runCli(["run", "manifests", "--state", "../.reel/state.db", "--out", "../out"], {
      cwd: campaign,
      env: env(s),
    });
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(s.counters.generationsCreated).toBe(4);
  });

  it("a watch of such a project skips the manifests the state above ran, with the same fix", async () => {
    const s = await sandbox();
    const { root, campaign } = await ranWithTopState(s);
    await writeFile(join(campaign, "reel.yaml"), "version: 1\n");
    const watch = startCommand(["watch", "top/campaign/manifests", "--settle", "50ms"], {
      cwd: root,
      env: env(s),
    });
    await until(
      () => (watch.output().stderr.match(/skipped until fixed/g) ?? []).length === 2,
      "both manifests skipped",
      10_000,
    );
    expect(watch.output().stderr).toContain(".reel/state.db above has work of 'other'");
    expect(watch.output().stderr).toContain(".reel/state.db above has work of 'promo'");
    expect((await watch.stop()).code).toBe(0);
    expect(s.counters.generationsCreated).toBe(4);
  });

  it("reel init into a folder that holds manifests adds no example to them: the next run pays for theirs alone", async () => {
    const s = await sandbox();
    const root = await tempDir();
    await writeTree(root, { "studio/manifests/promo.yaml": PROMO });
    const init = await runCli(["init", "studio"], { cwd: root, env: {} });
    expect(init.code, init.stderr).toBe(0);
    expect(existsSync(join(root, "studio", "reel.yaml"))).toBe(true);
    expect(existsSync(join(root, "studio", "manifests", "example.yaml"))).toBe(false);
    expect(init.stdout).toContain("no example manifest");
    const run = await runCli(["run", "."], { cwd: join(root, "studio"), env: env(s) });
    expect(run.code, run.stderr).toBe(0);
    expect(s.counters.generationsCreated).toBe(2);
  });
});

describe("paths through symbolic links", () => {
  const downloads = (s: Sandbox): number => s.counters.requestCount("GET", "/files/:token");

  it("a project reached through a linked folder is the same project: nothing made or downloaded again at each switch", async () => {
    const s = await sandbox();
    const root = await tempDir();
    await writeTree(root, { "real/reel.yaml": "version: 1\n", "real/manifests/promo.yaml": PROMO });
    await symlink("real", join(root, "link"));
    expect((await runCli(["run", "real/manifests"], { cwd: root, env: env(s) })).code).toBe(0);
    const fetched = downloads(s);
    expect(fetched).toBe(2);
    for (const path of ["link/manifests", "real/manifests", "link/manifests/promo.yaml"]) {
      const run = await runCli(["run", path], { cwd: root, env: env(s) });
      expect(run.code, run.stderr).toBe(0);
      expect(firstLine(run.stderr), path).toBe(
        "reel run: state real/.reel/state.db · out real/out · project real/reel.yaml",
      );
    }
    expect(s.counters.generationsCreated).toBe(2);
    expect(downloads(s)).toBe(fetched);
  });

  it("manifests read through a linked project folder may read its files, from outside it", async () => {
    const s = await sandbox();
    const root = await tempDir();
    await writeTree(root, {
      "real/reel.yaml": "version: 1\n",
      "real/media/face.png": { fixture: "tiny.png" },
      "real/manifests/face.yaml": [
        "version: 1",
        "name: face",
        "videos:",
        "  - id: hello",
        "    model: avatar-h1",
        "    resolution: 540p",
        "    source: ../media/face.png",
        "    chunks:",
        '      - { duration: 5, speech: { voice: 17, text: "Hello" } }',
        "",
      ].join("\n"),
    });
    await symlink("real", join(root, "link"));
    await mkdir(join(root, "elsewhere"));
    const run = await runCli(["run", "../link/manifests"], { cwd: join(root, "elsewhere"), env: env(s) });
    expect(run.code, run.stderr).toBe(0);
    expect(s.counters.generationsCreated).toBe(1);
  });

  it("a link to a project's manifests finds the project's state, not a new one where the link is", async () => {
    const s = await sandbox();
    const root = await tempDir();
    await writeTree(root, { "p/reel.yaml": "version: 1\n", "p/manifests/promo.yaml": PROMO });
    await symlink(join("p", "manifests"), join(root, "shortcut"));
    expect((await runCli(["run", "p/manifests"], { cwd: root, env: env(s) })).code).toBe(0);
    const run = await runCli(["run", "shortcut"], { cwd: root, env: env(s) });
    expect(run.code, run.stderr).toBe(0);
    expect(firstLine(run.stderr)).toBe("reel run: state p/.reel/state.db · out p/out · project p/reel.yaml");
    expect(s.counters.generationsCreated).toBe(2);
    expect(existsSync(join(root, ".reel"))).toBe(false);
  });

  it("an output folder given through a link is the same folder: its videos are not downloaded again", async () => {
    const s = await sandbox();
    const root = await tempDir();
    await writeTree(root, { "promo.yaml": PROMO });
    expect((await runCli(["run", "promo.yaml", "--out", "videos"], { cwd: root, env: env(s) })).code).toBe(0);
    await symlink("videos", join(root, "videos-link"));
    const fetched = downloads(s);
    for (const out of ["videos-link", "videos"]) {
      const run = await runCli(["run", "promo.yaml", "--out", out], { cwd: root, env: env(s) });
      expect(run.code, run.stderr).toBe(0);
    }
    expect(downloads(s)).toBe(fetched);
    expect(s.counters.generationsCreated).toBe(2);
    await expectServedVideo(join(root, "videos", "promo", "teaser.mp4"));
  });

  it("reel watch LINK watches the folder the link names", async () => {
    const s = await sandbox();
    const root = await tempDir();
    await writeTree(root, { "incoming/promo.yaml": PROMO });
    await symlink("incoming", join(root, "inbox"));
    const watch = startCommand(["watch", "inbox", "--settle", "50ms"], { cwd: root, env: env(s) });
    await until(
      async () =>
        (await isServedVideo(join(root, "out", "promo", "teaser.mp4"))) &&
        (await isServedVideo(join(root, "out", "promo", "trailer.mp4"))),
      "both videos made",
      10_000,
    );
    expect((await watch.stop()).code).toBe(0);
    expect(s.counters.generationsCreated).toBe(2);
  });
});

describe("the project file", () => {
  it("sets state, out, concurrency and the base URL, relative to itself; flags and REEL_* come first", async () => {
    const s = await sandbox();
    const root = await tempDir();
    await writeTree(root, {
      "p/reel.yaml": `version: 1\nstate: ../shared/state.db\nout: videos\nconcurrency: 1\nbaseUrl: ${s.baseUrl}\n`,
      "p/m/promo.yaml": PROMO,
    });
    // No --base-url: the project's. The key comes from the environment alone.
    const run = await runCli(["run", "p/m", "--json"], { cwd: root, env: { REEL_API_KEY: s.apiKey } });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(root, "shared", "state.db"))).toBe(true);
    expect(existsSync(join(root, "p", "videos", "promo", "teaser.mp4"))).toBe(true);
    // concurrency: 1 from the project file: never two generations unfinished at once.
    expect(s.counters.peakUnfinished).toBe(1);

    // REEL_OUT over the project file, --out over REEL_OUT.
    const viaEnv = await runCli(["status", "p/m", "--json"], { cwd: root, env: { REEL_OUT: "env-out" } });
    expect(JSON.parse(viaEnv.stdout)).toMatchObject({ out: join(root, "env-out") });
    const viaFlag = await runCli(["status", "p/m", "--json", "--state", "x.db"], {
      cwd: root,
      env: { REEL_STATE: "y.db" },
    });
    expect(JSON.parse(viaFlag.stdout)).toMatchObject({
      state: join(root, "x.db"),
      out: join(root, "p", "videos"),
    });
  });

  // plan compares with the service run would use: the project's base URL too, on a shared store
  // (which must be told the service) as on a state file (which would otherwise take the last used).
  it("plan compares with the project file's base URL, on a PostgreSQL store and on a state file", async (context) => {
    const url = await database(context);
    const s = await sandbox();
    for (const store of [{ REEL_STORE: url }, {}]) {
      const root = await tempDir();
      await writeTree(root, {
        "p/reel.yaml": `version: 1\nbaseUrl: ${s.baseUrl}\n`,
        "p/m/promo.yaml": PROMO,
      });
      const ran = await runCli(["run", "p/m"], { cwd: root, env: { REEL_API_KEY: s.apiKey, ...store } });
      expect(ran.code, ran.stderr).toBe(0);
      // Then a try on the sandbox: a state file's last service, which the project's address is not.
      if (!("REEL_STORE" in store))
        expect((await runCli(["run", "p/m", "--sandbox"], { cwd: root, env: store })).code).toBe(0);
      const plan = await runCli(["plan", "p/m", "--json"], { cwd: root, env: store });
      expect(plan.code, plan.stderr).toBe(0);
      const shown = JSON.parse(plan.stdout) as {
        service: string;
        plan: { jobs: { done: string[]; new: string[] } };
      };
      expect(shown.service).toBe(s.baseUrl);
      expect(shown.plan.jobs).toMatchObject({ done: ["promo/teaser", "promo/trailer"], new: [] });
    }
    expect(s.counters.generationsCreated).toBe(4);
  });

  it("is refused at its line and column, with the fix, before anything is sent", async () => {
    const s = await sandbox();
    const root = await tempDir();
    await writeTree(root, {
      "reel.yaml": "version: 1\nconcurrency: lots\napiKey: sk-secret-123456\n",
      "promo.yaml": PROMO,
    });
    const run = await runCli(["run", "promo.yaml"], { cwd: root, env: env(s) });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('reel.yaml:2:14: concurrency takes a whole number from 1 up, not "lots"');
    expect(run.stderr).toContain(
      "reel.yaml:3:1: unknown setting 'apiKey': the API key is never written in a file",
    );
    expect(run.stderr).not.toContain("sk-secret-123456");
    expect(s.counters.requests.size).toBe(0);

    // A manifest saved under the project file's name is told apart.
    await writeFile(join(root, "reel.yaml"), PROMO);
    const manifestAsProject = await runCli(["plan", "promo.yaml"], { cwd: root, env: {} });
    expect(manifestAsProject.code).toBe(2);
    expect(manifestAsProject.stderr).toContain(
      "this looks like a manifest, but reel.yaml is reel's project file",
    );
  });

  it("is never read as a manifest in a folder run as a whole", async () => {
    const s = await sandbox();
    const root = await tempDir();
    await writeTree(root, { "reel.yaml": "version: 1\n", "promo.yaml": PROMO });
    const run = await runCli(["run", "."], { cwd: root, env: env(s) });
    expect(run.code, run.stderr).toBe(0);
    expect(s.counters.generationsCreated).toBe(2);
  });
});

describe("reel init", () => {
  it("writes a project whose example validates and runs from anywhere, and never writes over a file", async () => {
    const root = await tempDir();
    const init = await runCli(["init", "studio"], { cwd: root, env: {} });
    expect(init.code).toBe(0);
    expect(init.stdout).toContain("cd studio && reel run --sandbox manifests/");
    for (const file of ["reel.yaml", "manifests/example.yaml", "media/host.jpg", ".gitignore"]) {
      expect(existsSync(join(root, "studio", file)), file).toBe(true);
    }
    // The $schema lines point at reel's schemas from where the files are.
    for (const [file, schema] of [
      ["manifests/example.yaml", "manifest.schema.json"],
      ["reel.yaml", "project.schema.json"],
    ] as const) {
      const text = readFileSync(join(root, "studio", file), "utf8");
      const ref = /\$schema=(\S+)/.exec(text)![1]!;
      expect(ref.endsWith(`schemas/${schema}`)).toBe(true);
      expect(existsSync(join(root, "studio", file, "..", ref)), `${file}: ${ref}`).toBe(true);
    }
    const validate = await runCli(["validate", "studio/manifests"], { cwd: root, env: {} });
    expect(validate.code, validate.stderr).toBe(0);
    const plan = await runCli(["plan", "studio/manifests"], { cwd: root, env: {} });
    expect(plan.stdout.split("\n")[0]).toBe(
      "state studio/.reel/state.db (new) · out studio/out · project studio/reel.yaml",
    );

    const before = await readFile(join(root, "studio", "reel.yaml"), "utf8");
    const twice = await runCli(["init", "studio"], { cwd: root, env: {} });
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain("already exist");
    expect(await readFile(join(root, "studio", "reel.yaml"), "utf8")).toBe(before);
  });
});

describe("the end of a run", () => {
  it("names the folders, the report and the next steps, in words and as codes", async () => {
    const s = await sandbox();
    const root = await tempDir();
    const withGhost = `${PROMO}  - id: ghost\n    source: { asset: 999999 }\n    chunks:\n      - duration: 5\n        text: "nobody"\n`;
    await writeTree(root, { "promo.yaml": withGhost });
    const text = await runCli(["run", "promo.yaml"], { cwd: root, env: env(s) });
    expect(text.code).toBe(1);
    expect(text.stderr).toContain("reel run: completed. 2 Success, 1 Fail");
    expect(text.stderr).toMatch(/\n {2}promo\/ghost: Fail: .+/);
    expect(text.stderr).toContain("Name the file itself in its place");
    expect(text.stderr).toContain("Videos: out/promo/ (2)");
    expect(text.stderr).toContain("Report: out/index.html");
    expect(text.stderr).not.toContain("Files hashed");

    const json = await runCli(["run", "promo.yaml", "--json"], { cwd: root, env: env(s) });
    const summary = JSON.parse(json.stdout) as {
      nextSteps: { code: string; jobs?: string[] }[];
      report: string;
    };
    expect(summary.nextSteps).toEqual([
      expect.objectContaining({ code: "REPLACE_ASSET", jobs: ["promo/ghost"] }),
    ]);
    expect(summary.report).toBe(join(root, "out", "index.html"));
  });

  it("--open hands the report to the browser", async () => {
    const s = await sandbox();
    const root = await tempDir();
    await writeTree(root, { "promo.yaml": PROMO });
    const browser = join(root, "browser.sh");
    await writeFile(browser, `#!/bin/sh\necho "$1" > "${join(root, "opened")}"\n`);
    await chmod(browser, 0o755);
    const run = await runCli(["run", "promo.yaml", "--open"], {
      cwd: root,
      env: { ...env(s), BROWSER: browser, PATH: process.env.PATH },
    });
    expect(run.code).toBe(0);
    await until(() => existsSync(join(root, "opened")), "the browser to be started");
    expect((await readFile(join(root, "opened"), "utf8")).trim()).toBe(join(root, "out", "index.html"));
  });

  it("plan names the jobs to submit and the earlier version each replaces, kept where the run keeps it", async () => {
    const s = await sandbox();
    const root = await tempDir();
    await writeTree(root, { "promo.yaml": PROMO });
    expect((await runCli(["run", "promo.yaml"], { cwd: root, env: env(s) })).code).toBe(0);
    await writeFile(join(root, "promo.yaml"), PROMO.replace("a mug on a table", "a cup on a table"));
    const plan = await runCli(["plan", "promo.yaml"], { cwd: root, env: {} });
    expect(plan.code).toBe(0);
    const line = /\n {2}promo\/teaser \(replaces an earlier version: its video is kept as (\S+)\)\n/.exec(
      plan.stdout,
    );
    expect(line, plan.stdout).not.toBeNull();
    expect(plan.stdout).toMatch(/to submit:\n {2}promo\/teaser /);
    expect((await runCli(["run", "promo.yaml"], { cwd: root, env: env(s) })).code).toBe(0);
    expect(existsSync(join(root, "out", line![1]!))).toBe(true);
  });
});

describe("the project file's JSON Schema", () => {
  it("the committed schemas/project.schema.json is the generated one (run `npm run gen:schema`)", async () => {
    const { projectSchemaText } = await import("../../src/project/index.js");
    const { REPO } = await import("../helpers/cli.js");
    expect(await readFile(join(REPO, "schemas", "project.schema.json"), "utf8")).toBe(projectSchemaText());
  });
});
