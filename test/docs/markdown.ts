// Reading the repository's Markdown as a reader's browser does: its links, and the anchors its
// headings make, outside code blocks and code spans (where brackets are text, not links).
import { readdirSync } from "node:fs";
import { join } from "node:path";

export const REPO = join(import.meta.dirname, "..", "..");

/** README.md and every Markdown page under docs/, relative to the repository. */
export function markdownPages(): string[] {
  const docs = readdirSync(join(REPO, "docs"), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".md"))
    .map((name) => join("docs", name));
  return ["README.md", ...docs.sort()];
}

/** The lines outside fenced code blocks, with their numbers (1-based), code spans removed. */
export function proseLines(text: string): { line: number; text: string }[] {
  const lines: { line: number; text: string }[] = [];
  let fence: string | undefined;
  text.split("\n").forEach((raw, index) => {
    const opening = /^\s*(`{3,}|~{3,})/.exec(raw);
    if (opening) {
      if (fence === undefined) fence = opening[1]![0]!;
      else if (opening[1]![0] === fence) fence = undefined;
      return;
    }
    if (fence === undefined) lines.push({ line: index + 1, text: raw.replace(/`+[^`]*`+/g, "") });
  });
  return lines;
}

export interface Link {
  readonly line: number;
  readonly target: string;
}

/** Every inline link and image target of the page, `[text](target)` or `![alt](target "title")`. */
export function linksOf(text: string): Link[] {
  const links: Link[] = [];
  for (const { line, text: prose } of proseLines(text))
    for (const match of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
      links.push({ line, target: match[1]! });
  return links;
}

/** The anchors the page's headings make, as GitHub spells them (duplicates get -1, -2...). */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const raw of text.split("\n")) {
    const opening = /^\s*(`{3,}|~{3,})/.exec(raw);
    if (opening) {
      if (fence === undefined) fence = opening[1]![0]!;
      else if (opening[1]![0] === fence) fence = undefined;
      continue;
    }
    const heading = fence === undefined ? /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(raw) : null;
    if (!heading) continue;
    const slug = heading[1]!
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/<[^>]+>/g, "")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}
