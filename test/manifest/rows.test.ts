// Campaigns from a spreadsheet: `rows:` makes one video per row of a CSV, each column a placeholder;
// cells take their field's type; problems of the file are said at its cells (physical line and
// column, 1-based); spreadsheet programs' dialects read right. Real files in a temp folder.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadManifests } from "../../src/manifest/index.js";
import { makeWorkspace, type Workspace } from "./helpers.js";

let ws: Workspace;
beforeEach(async () => {
  ws = await makeWorkspace();
});
afterEach(async () => {
  await ws.cleanup();
});

const welcome = (extra: { id?: string; rows?: string; text?: string; top?: string } = {}): string =>
  [
    "version: 1",
    "name: welcome",
    "defaults: { model: avatar-h1, resolution: 540p }",
    "videos:",
    `  - id: ${extra.id ?? "welcome-{lead_id}"}`,
    `    rows: ${extra.rows ?? "./leads.csv"}`,
    extra.top ?? "",
    "    source: ./media/face.png",
    "    chunks:",
    "      - duration: 5",
    `        speech: { voice: "{voice}", text: "${extra.text ?? "Hi {first_name}, see you in {year} {{ok}}"}" }`,
  ].join("\n");

async function load(csv: string | Buffer, manifest = welcome()) {
  await ws.write("welcome.yaml", manifest);
  await ws.write("leads.csv", csv as string);
  return loadManifests(["welcome.yaml"], { cwd: ws.dir });
}

const shown = (problems: { file: string; line: number; col: number; message: string }[]) =>
  problems.map((p) => `${p.file}:${p.line}:${p.col}: ${p.message}`);

const speechOf = (result: Awaited<ReturnType<typeof load>>) =>
  result.manifests[0]!.jobs.map((j) => [j.id, j.spec.chunks[0]!.audio]);

describe("rows", () => {
  it("makes one video per row; a voice cell becomes a number, a text stays text (leading zeros, 2024)", async () => {
    const result = await load("lead_id,first_name,voice,year\n0042,Anna,17,2024\n7,Ben,0018,007\n");
    expect(result.problems).toEqual([]);
    expect(speechOf(result)).toEqual([
      ["welcome-0042", { kind: "speech", voiceId: "17", text: "Hi Anna, see you in 2024 {ok}" }],
      ["welcome-7", { kind: "speech", voiceId: "18", text: "Hi Ben, see you in 007 {ok}" }],
    ]);
  });

  it("reads a spreadsheet program's dialects: BOM, CRLF, ';' and tab, quoted commas and line breaks", async () => {
    const rows = ["lead_id;first_name;voice;year", '1;"Anna; Jr";17;2024', '2;"Ben\r\nsecond line";18;2025'];
    const semicolon = await load(Buffer.from(`\uFEFF${rows.join("\r\n")}\r\n`));
    expect(semicolon.problems).toEqual([]);
    expect(speechOf(semicolon).map(([, a]) => (a as { text: string }).text)).toEqual([
      "Hi Anna; Jr, see you in 2024 {ok}",
      "Hi Ben\nsecond line, see you in 2025 {ok}",
    ]);
    const tab = await load('lead_id\tfirst_name\tvoice\tyear\n1\t"Anna, Jr"\t17\t2024\n');
    expect(speechOf(tab).map(([, a]) => (a as { text: string }).text)).toEqual([
      "Hi Anna, Jr, see you in 2024 {ok}",
    ]);
    const given = await load(
      "lead_id|first_name|voice|year\n1|Anna|17|2024\n",
      welcome({ rows: '{ file: ./leads.csv, delimiter: "|" }' }),
    );
    expect(given.problems).toEqual([]);
    // After a quoted line break, a problem is placed at the physical line and column.
    const bad = await load('lead_id,first_name,voice,year\n1,"Anna\nJr",seventeen,2024\n');
    expect(shown(bad.problems)).toEqual([
      'leads.csv:3:5: welcome-1: voice "seventeen" is not a voice id (a whole number)',
    ]);
  });

  it("counts a cell's column in characters: after an emoji, empty lines, and with a delimiter outside the BMP", async () => {
    const emoji = await load("lead_id,first_name,voice,year\n\n1,\u{1F600}\u{1F600} Anna,x17,2024\n");
    expect(shown(emoji.problems)).toEqual([
      'leads.csv:3:11: welcome-1: voice "x17" is not a voice id (a whole number)',
    ]);
    const star = await load(
      "lead_id\u{2B50}first_name\u{2B50}voice\u{2B50}year\n1\u{2B50}Anna\u{2B50}17\u{2B50}2024\n2\u{2B50}\u{1F600}\u{2B50}x\u{2B50}2024\n",
      welcome({ rows: '{ file: ./leads.csv, delimiter: "\u{2B50}" }' }),
    );
    expect(shown(star.problems)).toEqual([
      'leads.csv:3:5: welcome-2: voice "x" is not a voice id (a whole number)',
    ]);
  });

  it("says every problem of a cell at leads.csv:LINE:COL, with the video id and the column, each once", async () => {
    const manifest = welcome({ top: '    resolution: "{res}"' });
    const result = await load(
      "lead_id,first_name,voice,year,res\n1,Anna,17,2024,540p\n2,Ben,seventeen,2024,540p\n3,Cleo,17,2024,999p\n1,Dan,17,2024,540p\n",
      manifest,
    );
    expect(shown(result.problems)).toEqual([
      'leads.csv:3:7: welcome-2: voice "seventeen" is not a voice id (a whole number)',
      'leads.csv:4:16: welcome-3: column res, as resolution must be 540p, 720p or 1080p, not "999p"',
      "leads.csv:5:1: welcome-1: lines 2 and 5 of leads.csv make the same id; the id's column (lead_id) must hold a different value in every row",
    ]);
    expect(result.manifests).toEqual([]);
  });

  it("names the columns the file has for an unknown placeholder, and refuses an id that names no column", async () => {
    const csv = "lead_id,first_name,voice,year\n1,Anna,17,2024\n";
    const typo = await load(csv, welcome({ text: "Hi {first_nam}" }));
    expect(shown(typo.problems)).toEqual([
      "welcome.yaml:11:43: unknown placeholder {first_nam}: leads.csv has no such column; did you mean {first_name}? Its columns: lead_id, first_name, voice, year (write {{ for a brace)",
    ]);
    const noKey = await load(csv, welcome({ id: "welcome" }));
    expect(shown(noKey.problems)).toEqual([
      "welcome.yaml:5:9: the id of a video with rows must name a column whose values are unique in leads.csv, so that each row keeps its job when rows move, e.g. id: welcome-{lead_id}; its columns: lead_id, first_name, voice, year",
    ]);
  });

  it("says a malformed file once, at its line: unbalanced quote, too few fields, not UTF-8, an empty header", async () => {
    const cases: [string | Buffer, string][] = [
      [
        'lead_id,first_name,voice,year\n1,"Anna,17,2024\n2,Ben,18,2024\n',
        'leads.csv:2:3: a quoted field is never closed: a " is missing (a quote inside a quoted field is written twice, "")',
      ],
      [
        "lead_id,first_name,voice,year\n1,Anna,17,2024\n2,Ben\n",
        'leads.csv:3:1: this row has a different number of fields from the header line (2, not 4); a field that holds "," must be quoted',
      ],
      [
        Buffer.concat([
          Buffer.from("lead_id,first_name,voice,year\n1,Ren"),
          Buffer.from([0xe9]),
          Buffer.from(",17,2024\n"),
        ]),
        "leads.csv:2:6: the file is not UTF-8 text (Latin-1, or a spreadsheet's legacy encoding?); export it as CSV UTF-8",
      ],
      [
        "lead_id,,voice,year\n1,Anna,17,2024\n",
        "leads.csv:1:9: column 2 of the header line has no name; name every column",
      ],
    ];
    for (const [csv, problem] of cases) expect(shown((await load(csv)).problems)).toEqual([problem]);
  });

  it("reads the file under the media rule: relative to the manifest, inside the allowed folders", async () => {
    await ws.write("leads.csv", "lead_id,first_name,voice,year\n1,Anna,17,2024\n");
    await ws.write("sub/welcome.yaml", welcome({ rows: "../leads.csv" }).replace("./media/", "../media/"));
    expect((await loadManifests(["sub/welcome.yaml"], { cwd: ws.dir })).problems).toEqual([]);
    const outside = await loadManifests(["welcome.yaml"], { cwd: ws.dir }).then(async () => {
      await ws.write("welcome.yaml", welcome({ rows: `${ws.outside}/leads.csv` }));
      return loadManifests(["welcome.yaml"], { cwd: ws.dir });
    });
    expect(outside.problems.map((p) => p.code)).toEqual(["E_PATH_OUTSIDE"]);
  });

  it("combines with a matrix: each row times the matrix's combinations", async () => {
    const manifest = welcome({
      id: "welcome-{lead_id}-{lang}",
      top: "    matrix: { lang: [en, de] }",
      text: "{lang}: Hi {first_name}",
    });
    const result = await load("lead_id,first_name,voice\n1,Anna,17\n2,Ben,18\n", manifest);
    expect(result.problems).toEqual([]);
    expect(speechOf(result)).toEqual([
      ["welcome-1-en", { kind: "speech", voiceId: "17", text: "en: Hi Anna" }],
      ["welcome-1-de", { kind: "speech", voiceId: "17", text: "de: Hi Anna" }],
      ["welcome-2-en", { kind: "speech", voiceId: "18", text: "en: Hi Ben" }],
      ["welcome-2-de", { kind: "speech", voiceId: "18", text: "de: Hi Ben" }],
    ]);
  });

  it("counts rows against the video limit before expanding them", async () => {
    const csv = [
      "lead_id,first_name,voice,year",
      ...Array.from({ length: 30 }, (_, i) => `${i},A,17,2024`),
    ].join("\n");
    await ws.write("welcome.yaml", welcome());
    await ws.write("leads.csv", csv);
    const result = await loadManifests(["welcome.yaml"], { cwd: ws.dir, maxVideos: 20 });
    expect(result.problems.map((p) => p.code)).toEqual(["E_TOO_MANY_VIDEOS"]);
    expect(result.problems[0]!.message).toContain("this manifest makes 30 videos");
  });
});

describe("rows: the last cell", () => {
  it("places a problem of an empty last field in a file without a final line break", async () => {
    await ws.write("welcome.yaml", welcome({ text: "{year}" }).replace('"{voice}"', '"{v}"'));
    await ws.write("leads.csv", "lead_id,first_name,year,v\n1,Anna,2024,");
    const result = await loadManifests(["welcome.yaml"], { cwd: ws.dir });
    expect(shown(result.problems)).toEqual([
      'leads.csv:2:13: welcome-1: column v, as voice "" is not a voice id (a whole number)',
    ]);
  });
});
