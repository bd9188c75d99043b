// The README and docs/ are read in the repository, on GitHub or in a clone: every link must lead to
// a file of the repository (and an #anchor to a heading of it), and nothing may point where a
// reader of the repository cannot follow (notes of the project's own tracker, documents kept
// outside it).
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO, anchorsOf, linksOf, markdownPages } from "./markdown.js";

function read(page: string): string {
  return readFileSync(join(REPO, page), "utf8");
}

/** What a link of `page` leads to that is not there, or not inside the repository. */
function brokenLinks(page: string): string[] {
  const broken: string[] = [];
  for (const { line, target } of linksOf(read(page))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: lead outside by intent
    const [path = "", anchor] = target.split("#", 2);
    const file = path === "" ? join(REPO, page) : join(REPO, dirname(page), decodeURIComponent(path));
    const where = `${page}:${line}: ${target}`;
    const inside = relative(REPO, file);
    if (inside.startsWith(`..${sep}`) || inside === "..") broken.push(`${where}: outside the repository`);
    else if (!existsSync(file)) broken.push(`${where}: no such file`);
    else if (anchor !== undefined) {
      if (!file.endsWith(".md") || statSync(file).isDirectory())
        broken.push(`${where}: an anchor in a non-page`);
      else if (!anchorsOf(readFileSync(file, "utf8")).has(anchor)) broken.push(`${where}: no such heading`);
    }
  }
  return broken;
}

/** Text a reader of the repository cannot follow: the tracker's numbers, documents kept elsewhere. */
const OUTSIDE = [
  /\bissues? #?\d+/i,
  /\bissue #\d+/i,
  /PRODUCT\.md/,
  /api-spec\.md/,
  /\.\.\/shared\b/,
  /\/work\/(shared|wt|main)\b/,
  /product contract/i,
  /farm-studio/,
];

function filesUnder(folder: string, ends: readonly string[]): string[] {
  return readdirSync(join(REPO, folder), { recursive: true, encoding: "utf8" })
    .filter((name) => ends.some((end) => name.endsWith(end)))
    .map((name) => join(folder, name));
}

function outsideReferences(files: readonly string[]): string[] {
  const found: string[] = [];
  for (const file of files)
    read(file)
      .split("\n")
      .forEach((text, index) => {
        for (const pattern of OUTSIDE)
          if (pattern.test(text)) found.push(`${file}:${index + 1}: ${text.trim().slice(0, 100)}`);
      });
  return found;
}

describe("the README and docs/", () => {
  it("every relative link leads to a file of the repository, and every #anchor to a heading", () => {
    const pages = markdownPages();
    expect(pages).toContain("docs/manifest.md");
    expect(pages.flatMap(brokenLinks)).toEqual([]);
  });

  it("name no tracker issue, no document kept outside the repository, no tool of one machine", () => {
    const files = [
      ...markdownPages(),
      ...filesUnder("bench", [".js"]),
      ...filesUnder("scripts", [".js", ".sh"]),
    ];
    expect(outsideReferences(files)).toEqual([]);
  });

  it("the checks see what they are meant to: a broken link, a missing heading, an issue number", () => {
    // The same functions over a page written to fail, so a check that silently matched nothing
    // cannot pass.
    const page = "# Title\n\n## A section: `code` and more\n\n[ok](#a-section-code-and-more) [bad](#nope)\n";
    expect(anchorsOf(page)).toEqual(new Set(["title", "a-section-code-and-more"]));
    expect(linksOf(page).map((link) => link.target)).toEqual(["#a-section-code-and-more", "#nope"]);
    expect(linksOf("```\n[not a link](x.md)\n```\n`[nor](y.md)`\n")).toEqual([]);
    // Spelled in two parts, so that this file names no issue itself.
    expect(OUTSIDE.some((pattern) => pattern.test(["as issue", "18 asked"].join(" ")))).toBe(true);
  });
});
