// The YAML mistakes manifest writers make most, said with their fix. The `yaml` package words them
// for YAML experts ("Nested mappings are not allowed in compact mappings") and places an unclosed
// quote where the file ends, lines away from the quote itself.
import { type Document, isScalar, visit } from "yaml";

export interface YamlHint {
  /** Where the problem is, as an offset into the text. */
  readonly offset: number;
  readonly message: string;
}

/** A clearer message (and place) for one of the `yaml` package's errors, if it is a common one. */
export function yamlHint(
  doc: Document.Parsed,
  text: string,
  issue: { code: string; message: string; pos: readonly [number, number] },
): YamlHint | undefined {
  const at = issue.pos[0];
  if (issue.code === "MISSING_CHAR" && /^Missing closing (["'])quote/.test(issue.message)) {
    const quote = issue.message.charAt("Missing closing ".length);
    return {
      offset: openingQuoteBefore(doc, at) ?? at,
      message: `a text opened with ${quote} is never closed: add the closing ${quote}${quote === '"' ? ' (a " inside the text is written \\")' : " (a ' inside the text is written '')"}`,
    };
  }
  if (issue.code === "BLOCK_AS_IMPLICIT_KEY") {
    // `text: Note: this is great`: the second ": " reads as a mapping inside the value.
    const line = lineAt(text, at);
    const pair = /^(\s*(?:- )?)([\w.-]+): (.*: .*)$/.exec(line);
    if (pair) {
      const value = pair[3]!.trimEnd();
      return {
        offset: at,
        message: `a value containing ": " must be in quotes: write ${pair[2]}: ${JSON.stringify(value)}`,
      };
    }
  }
  if (issue.code === "MISSING_CHAR" && issue.message.startsWith("Sequence item without - indicator")) {
    return {
      offset: at,
      message:
        "this line is indented differently from the lines around it: give it the same indentation as the other fields of its block",
    };
  }
  return undefined;
}

/** The start of the quoted text that runs up to `offset` (the unclosed one). */
function openingQuoteBefore(doc: Document.Parsed, offset: number): number | undefined {
  let found: number | undefined;
  visit(doc, {
    Scalar(_key, node) {
      if (!isScalar(node) || !node.range) return;
      if (node.type !== "QUOTE_DOUBLE" && node.type !== "QUOTE_SINGLE") return;
      const [start, end] = node.range;
      if (start < offset && end >= offset && (found === undefined || start > found)) found = start;
    },
  });
  return found;
}

function lineAt(text: string, offset: number): string {
  const start = text.lastIndexOf("\n", offset - 1) + 1;
  const end = text.indexOf("\n", offset);
  return text.slice(start, end === -1 ? text.length : end).replace(/\r$/, "");
}
