// Human text broken at word boundaries for a terminal's width: never in the middle of a word (but a
// word longer than a line), colour codes taking no column, continuations indented under what they
// continue; the CLI's own streams wrapped so on a terminal only.
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { rawStream, wrappedOnTerminal } from "../../src/display/terminal-stream.js";
import { plainText, visibleWidth, wrapLine, wrapText } from "../../src/display/text-wrap.js";

describe("wrapping human text", () => {
  it("breaks prose at spaces, every line within the width, no word cut", () => {
    const text =
      "Failed: fix the manifest (a changed video is a new job), or rerun with --retry-failed (a new, paid attempt).";
    const lines = wrapLine(text, 79);
    expect(lines).toEqual([
      "Failed: fix the manifest (a changed video is a new job), or rerun with",
      "--retry-failed (a new, paid attempt).",
    ]);
    expect(lines.join(" ")).toBe(text);
  });

  it("leaves a line that fits as it is, padding and all", () => {
    const row = "  spring                     3      15        0";
    expect(wrapLine(row, 79)).toEqual([row]);
  });

  it("indents a continuation under the second column, or two past an indented line's indent", () => {
    expect(wrapLine(`  --open        ${"word ".repeat(14)}end`, 50)).toEqual([
      "  --open        word word word word word word word",
      "                word word word word word word word",
      "                end",
    ]);
    expect(wrapLine(`  spring/teaser: Fail: ${"asset ".repeat(12)}gone`, 40)).toEqual([
      "  spring/teaser: Fail: asset asset asset",
      "    asset asset asset asset asset asset",
      "    asset asset asset gone",
    ]);
  });

  it("counts colour codes as no column and keeps them with their words", () => {
    const red = (s: string) => `\x1b[31m${s}\x1b[39m`;
    const line = `${red("✗ failed")} m/a: ${"the service said no ".repeat(5)}`;
    const lines = wrapLine(line, 40);
    for (const l of lines) expect(visibleWidth(l)).toBeLessThanOrEqual(40);
    expect(lines[0]).toContain(red("✗ failed"));
    expect(lines.map((l) => plainText(l).trim()).join(" ")).toBe(
      `✗ failed m/a: ${"the service said no ".repeat(5).trim()}`,
    );
  });

  it("cuts only a word longer than a line, and continues after text already on the line", () => {
    expect(wrapLine(`see ${"x".repeat(30)}`, 12)).toEqual(["see", "xxxxxxxxxxxx", "xxxxxxxxxxxx", "xxxxxx"]);
    expect(wrapLine("one two three", 10, { start: 6 })).toEqual(["one", "two three"]);
  });

  it("wraps each line of a text; a description going on under a broken line flows on from it", () => {
    expect(wrapText("short\nthis one is a little too long\n", 16)).toBe(
      "short\nthis one is a\nlittle too long\n",
    );
    const help = [
      "  --only GLOB   run only the jobs whose manifest/id matches (repeatable),",
      "                e.g. 'spring/*'",
      "Exit codes: 0 all succeeded, 1 some job failed,",
      "2 invalid input",
    ].join("\n");
    expect(wrapText(help, 50)).toBe(
      [
        "  --only GLOB   run only the jobs whose",
        "                manifest/id matches (repeatable),",
        "                e.g. 'spring/*'",
        "Exit codes: 0 all succeeded, 1 some job failed,",
        "2 invalid input",
      ].join("\n"),
    );
    // An unindented line is a message of its own, unless the text is paragraphs (a help).
    expect(wrapText("Failed: fix the manifest, or rerun with --retry-failed.\nVideos: out/", 40)).toBe(
      "Failed: fix the manifest, or rerun with\n--retry-failed.\nVideos: out/",
    );
    expect(
      wrapText("Exit codes: 0 all succeeded, 1 some job failed, 2\ninvalid input", 40, { paragraphs: true }),
    ).toBe("Exit codes: 0 all succeeded, 1 some job\nfailed, 2 invalid input");
  });
});

describe("the CLI's streams on a terminal", () => {
  function terminal(columns: number) {
    let written = "";
    const stream = Object.assign(new PassThrough(), { isTTY: true, columns });
    stream.on("data", (d: Buffer) => (written += d.toString()));
    return { stream, written: () => written };
  }

  it("break text at words to the width, leave JSON whole, and let the live display write as it is", async () => {
    const t = terminal(30);
    const out = wrappedOnTerminal(t.stream as unknown as NodeJS.WriteStream);
    out.write("reel run: state .reel/state.db · out out\n");
    const json = `{"ok":true,"message":"${"a long message ".repeat(5)}"}\n`;
    out.write(json);
    out.write("written in ");
    out.write("two parts, still one line\n");
    rawStream(out).write(`${"x".repeat(40)}\n`);
    await new Promise((r) => setImmediate(r));
    expect(t.written()).toBe(
      [
        "reel run: state",
        ".reel/state.db · out out",
        json.trimEnd(),
        "written in two parts, still",
        "one line",
        "x".repeat(40),
        "",
      ].join("\n"),
    );
    // Not a terminal: the stream itself.
    const pipe = new PassThrough();
    expect(wrappedOnTerminal(pipe)).toBe(pipe);
  });
});
