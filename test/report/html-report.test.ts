// The renderer without a browser: what reaches the HTML, escaped for where it lands, and the counts.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { escapeHtml, jsonForScript, relativeHref } from "../../src/report/escape-html.js";
import { renderHtmlReport, writeHtmlReport } from "../../src/report/html-report.js";
import { toReportJob } from "../../src/report/report-job.js";
import { summarizeJobs } from "../../src/report/report-summary.js";
import { embeddedJobs } from "../helpers/report-page.js";
import { tempDir } from "../helpers/temp-dir.js";
import { REPORT_JS } from "../../src/report/report-script.js";
import { REPORT_CSS } from "../../src/report/report-style.js";
import { makeRow, manyRows } from "./rows.js";

const HOSTILE = `</script><script>alert(1)</script><!-- <img src=x onerror="alert(2)"> & ' \u2028`;

/** The page with the embedded data and the page's own script and style cut out. */
function markupOnly(html: string): string {
  return html
    .replace(/<script type="application\/json" id="reel-data">[\s\S]*?<\/script>/, "")
    .replace(/<script>[\s\S]*?<\/script>/, "")
    .replace(/<style>[\s\S]*?<\/style>/, "");
}

describe("escaping", () => {
  it("escapes HTML text and attribute values", () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;",
    );
  });

  it("embeds JSON with no character that HTML could read as markup, and reads back the same value", () => {
    const value = { text: HOSTILE, nested: ["<", ">", "&", "\u2029"] };
    const json = jsonForScript(value);
    expect(json).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(json)).toEqual(value);
  });

  it("builds relative links that cannot carry a scheme, a query or a fragment", () => {
    expect(relativeHref("spring campaign/intro.mp4")).toBe("spring%20campaign/intro.mp4");
    expect(relativeHref("javascript:alert(1)/x#y?z.json")).toBe("javascript%3Aalert(1)/x%23y%3Fz.json");
    // A path of plain characters is its own href; any other is encoded segment by segment.
    for (const path of ["campaign-0/v_1.~x.mp4", "a b/c", "ü/x", "x/%41", "a/b\\c", "a/./b", ""]) {
      expect(relativeHref(path)).toBe(path.split("/").map(encodeURIComponent).join("/"));
    }
  });
});

describe("the page's own script and style", () => {
  it("are valid and cannot end their element early", () => {
    // A syntax error here would leave a page with no cards; this catches it without a browser.
    expect(() => new Function(REPORT_JS)).not.toThrow();
    expect(REPORT_JS).not.toMatch(/<\/script|<!--/i);
    expect(REPORT_CSS).not.toMatch(/<\/style/i);
  });
});

describe("renderHtmlReport", () => {
  const hostileRows = [
    makeRow({
      manifest: `evil"><script>alert(3)</script>`,
      video_id: "v1",
      state: "Fail",
      file: null,
      error: `service said: ${HOSTILE}`,
      spec: {
        model: "avatar-h1",
        chunks: [
          { duration: 4, text: HOSTILE },
          { duration: 2, audio: { kind: "speech", voiceId: "17", text: `say ${HOSTILE}` } },
        ],
      },
    }),
  ];

  it("never puts text from a manifest or the service into markup", () => {
    const html = renderHtmlReport(hostileRows, { title: `<b>${HOSTILE}</b>` });
    // Exactly the page's two script elements (data and code), whatever the prompts say.
    expect(html.match(/<script/g)).toHaveLength(2);
    expect(html.match(/<\/script>/g)).toHaveLength(2);
    const markup = markupOnly(html);
    expect(markup).not.toMatch(/<script|<img|<!--/i);
    expect(markup).toContain("<h1>&lt;b&gt;&lt;/script&gt;");
    expect(markup).toContain("&lt;/script&gt;&lt;script&gt;");
    expect(markup).toContain("evil&quot;&gt;&lt;script&gt;");
  });

  it("keeps the hostile text intact in the embedded data, for the page to show as text", () => {
    const [job] = embeddedJobs(renderHtmlReport(hostileRows));
    // Every field of the job reaches the page, packed as values and named again.
    expect(job).toEqual(toReportJob(hostileRows[0]!));
    expect(job!.manifest).toBe(`evil"><script>alert(3)</script>`);
    expect(job!.chunks[0]!.text).toBe(HOSTILE);
    expect(job!.chunks[1]!.speech).toBe(`say ${HOSTILE}`);
    expect(job!.error).toBe(`service said: ${HOSTILE}`);
    // A "/" in a manifest name is a folder on disk too (the record is at OUT/<manifest>/<id>.json).
    expect(job!.record).toBe("evil%22%3E%3Cscript%3Ealert(3)%3C/script%3E/v1.json");
  });

  it("allows only its own script and style by hash, and local media", () => {
    const html = renderHtmlReport([]);
    const csp = /http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(html)![1]!;
    expect(csp).toContain("default-src &#39;none&#39;");
    expect(csp).toMatch(/script-src &#39;sha256-[A-Za-z0-9+/=]{44}&#39;/);
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).toContain("media-src");
  });

  it("describes each job from its row and spec, without local paths", () => {
    const job = toReportJob(
      makeRow({
        manifest: "spring",
        video_id: "intro",
        spec: {
          model: "avatar-h1",
          resolution: "540p",
          aspectRatio: "1:1",
          seed: 7,
          source: {
            kind: "file",
            path: "/home/ana/private/faces/anna.png",
            sha256: "a",
            size: 1,
            format: "png",
            stamp: { dev: "1", ino: "1", size: 1, mtimeNs: "0", ctimeNs: "0" },
          },
          chunks: [
            {
              duration: 20,
              text: "smiles",
              audio: { kind: "url", url: "https://cdn.example/a.mp3", use: "audio" },
            },
            { duration: 12, audio: { kind: "asset", id: "456" } },
          ],
        },
      }),
    );
    expect(job).toMatchObject({
      manifest: "spring",
      id: "intro",
      status: "Success",
      model: "avatar-h1",
      resolution: "540p",
      aspectRatio: "1:1",
      seed: 7,
      source: "anna.png",
      seconds: 32,
      video: "spring/intro.mp4",
      record: "spring/intro.json",
      submittedAt: Date.UTC(2025, 4, 1, 9, 0, 1),
    });
    expect(job.chunks).toEqual([
      { duration: 20, text: "smiles", speech: null, voice: null, audio: "https://cdn.example/a.mp3" },
      { duration: 12, text: null, speech: null, voice: null, audio: "asset 456" },
    ]);
    // Without the page's folder, no link to the local image either.
    expect(job.thumb).toBeNull();
  });

  it("links the source image relative to the page, or by its https address; speech keeps its voice", () => {
    const fileSource = (path: string) => ({
      kind: "file" as const,
      path,
      sha256: "a",
      size: 1,
      format: "png" as const,
      stamp: { dev: "1", ino: "1", size: 1, mtimeNs: "0", ctimeNs: "0" },
    });
    const local = toReportJob(
      makeRow({
        manifest: "spring",
        video_id: "a",
        spec: {
          model: "avatar-h1",
          source: fileSource("/work/campaign/media/my face#1.png"),
          chunks: [{ duration: 3, audio: { kind: "speech", voiceId: "17", text: "Hello" } }],
        },
      }),
      "/work/campaign/out",
    );
    expect(local.thumb).toBe("../media/my%20face%231.png");
    expect(local.chunks[0]).toMatchObject({ speech: "Hello", voice: "17" });
    const remote = toReportJob(
      makeRow({
        manifest: "spring",
        video_id: "b",
        spec: {
          model: "avatar-h1",
          source: { kind: "url", url: "https://cdn.example/face.png", use: "image" },
          chunks: [{ duration: 3, text: "x" }],
        },
      }),
      "/work/campaign/out",
    );
    expect(remote.thumb).toBe("https://cdn.example/face.png");
    const asset = toReportJob(
      makeRow({
        manifest: "spring",
        video_id: "c",
        spec: {
          model: "avatar-h1",
          source: { kind: "asset", id: "9" },
          chunks: [{ duration: 3, text: "x" }],
        },
      }),
      "/work/campaign/out",
    );
    expect(asset.thumb).toBeNull();
  });

  it("shows a submitted job by its last polled status, and survives a spec it cannot read", () => {
    const job = toReportJob({
      ...makeRow({ manifest: "m", video_id: "x", state: "submitted", task_status: "Running", file: null }),
      spec_json: "not json",
    });
    expect(job.status).toBe("Running");
    expect(job.chunks).toEqual([]);
    expect(job.video).toBeNull();
  });

  it("counts jobs by status and seconds of video, in all and per manifest", () => {
    const rows = manyRows(70, "media/result.mp4");
    const summary = summarizeJobs(rows.map((row) => toReportJob(row)));
    // manyRows cycles Success x4, Fail, uncertain, Running over 7 rows; 8 s of video each.
    expect(summary.statuses).toEqual(["Success", "Fail", "uncertain", "Running"]);
    expect(summary.total.jobs).toBe(70);
    expect(Object.fromEntries(summary.total.byStatus)).toEqual({
      Success: 40,
      Fail: 10,
      uncertain: 10,
      Running: 10,
    });
    expect(summary.total.seconds).toBe(560);
    expect(summary.total.doneSeconds).toBe(320);
    expect(summary.manifests.map((m) => [m.name, m.jobs])).toEqual([
      ["campaign-0", 14],
      ["campaign-1", 14],
      ["campaign-2", 14],
      ["campaign-3", 14],
      ["campaign-4", 14],
    ]);
    const sum = (status: string) => summary.manifests.reduce((n, m) => n + (m.byStatus.get(status) ?? 0), 0);
    for (const status of summary.statuses) expect(sum(status)).toBe(summary.total.byStatus.get(status));

    const html = renderHtmlReport(rows);
    expect(html).toContain('<option value="Fail">Fail (10)</option>');
    expect(html).toContain('<option value="campaign-3">campaign-3 (14)</option>');
    expect(html).toMatch(
      /<tfoot><tr><td>all manifests<\/td><td>70<\/td><td>40<\/td><td>10<\/td><td>10<\/td><td>10<\/td>/,
    );
    expect(embeddedJobs(html)).toHaveLength(70);
  });

  it("says how a run ended, with the next step, which service, and when", () => {
    const rows = [
      makeRow({ manifest: "m", video_id: "a" }),
      makeRow({ manifest: "m", video_id: "b", state: "submitted", task_status: "Running", file: null }),
    ];
    const startedAt = new Date("2025-05-01T09:00:00Z");
    const credits = renderHtmlReport(rows, {
      now: new Date("2025-05-01T10:00:00Z"),
      run: {
        outcome: "fatal",
        fatal: { code: "E_CREDITS", message: "Insufficient credits: <b>0</b> left" },
        service: "https://api.example.com/proxy",
        startedAt,
      },
    });
    expect(credits).toContain('class="banner b-stop" role="alert"><strong>Stopped: no credits left</strong>');
    expect(credits).toContain("Insufficient credits: &lt;b&gt;0&lt;/b&gt; left");
    expect(credits).toContain("Add credits on the service&#39;s console");
    expect(credits).toContain('Service: <span id="service">https://api.example.com/proxy</span>');
    expect(credits).toContain('Run started <time datetime="2025-05-01T09:00:00.000Z">');
    expect(credits).toContain("<body>\n");

    const key = renderHtmlReport(rows, {
      run: { outcome: "fatal", fatal: { code: "E_AUTH", message: "401" } },
    });
    expect(key).toContain("Stopped: the service refused the API key");
    expect(key).toContain("Set REEL_API_KEY to a valid key");
    const interrupted = renderHtmlReport(rows, { run: { outcome: "interrupted", service: "sandbox" } });
    expect(interrupted).toContain("<strong>Interrupted</strong>");
    expect(interrupted).toContain("run the same command again to resume");
    expect(interrupted).toContain('Service: <span id="service">sandbox (built-in emulator)</span>');

    const failed = renderHtmlReport(
      [
        makeRow({ manifest: "m", video_id: "a", state: "Fail", file: null, error: "bad" }),
        ...rows.slice(0, 1),
      ],
      { run: { outcome: "completed" } },
    );
    expect(failed).toContain(
      "1 job failed with attempts left (3 attempts allowed per job): rerun with --retry-failed to try it again (a new, paid attempt), or edit it in the manifest (a changed video is a new job).",
    );
    const allDone = renderHtmlReport(rows.slice(0, 1), { run: { outcome: "completed" } });
    expect(allDone).toContain(
      'class="banner b-ok" role="status"><strong>Completed: every job succeeded</strong>',
    );
    // Without a run (older callers), no banner at all.
    expect(renderHtmlReport(rows)).not.toContain('id="banner"');
  });

  it("reloads itself only while a watch runs", () => {
    const rows = [makeRow({ manifest: "m", video_id: "a" })];
    const watching = renderHtmlReport(rows, { run: { outcome: "watching" }, refreshSeconds: 2 });
    expect(watching).toContain('<body data-refresh="2">');
    expect(watching).toContain("Watching: reel watch is running");
    const stopped = renderHtmlReport(rows, { run: { outcome: "stopped" } });
    expect(stopped).toContain("<body>");
    expect(stopped).toContain("The watch has stopped");
  });

  it("makes every total of jobs a filter button", () => {
    const html = renderHtmlReport(manyRows(7, "v.mp4"));
    expect(html).toContain(
      '<button type="button" class="tile" data-status="" title="Show every job"><b>7</b>',
    );
    expect(html).toContain(
      '<button type="button" class="tile s-fail" data-status="Fail" title="Show only Fail jobs"><b>1</b>',
    );
    expect(html).toContain('<select id="sort">');
  });

  it("renders an empty run", () => {
    const html = renderHtmlReport([], { now: new Date("2025-05-01T10:00:00Z") });
    expect(html).toContain('<time datetime="2025-05-01T10:00:00.000Z">2025-05-01 10:00:00 UTC</time>');
    expect(embeddedJobs(html)).toEqual([]);
  });
});

describe("writeHtmlReport", () => {
  it("writes OUT/index.html whole, leaving no temp file", async () => {
    const out = await tempDir();
    await writeHtmlReport(out, [makeRow({ manifest: "m", video_id: "a" })], { title: "batch" });
    expect(await readdir(out)).toEqual(["index.html"]);
    const html = await readFile(join(out, "index.html"), "utf8");
    expect(html).toContain("<title>batch</title>");
    expect(html.trimEnd().endsWith("</html>")).toBe(true);
  });
});
