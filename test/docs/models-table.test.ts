// The README's table of models is what a newcomer reads before writing a manifest: it must say what
// the validator and the sandbox enforce, which both come from src/service-contract/model-rules.ts.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MODEL_RULES, describeDurations } from "../../src/service-contract/model-rules.js";
import { REPO } from "./markdown.js";

const MARKER = "<!-- models-table:";

/** The rows of the first table after the marker, each a list of cells without the Markdown. */
function readmeRows(): string[][] {
  const text = readFileSync(join(REPO, "README.md"), "utf8");
  const start = text.indexOf(MARKER);
  expect(start, `README.md has no ${MARKER} marker before the models table`).toBeGreaterThan(-1);
  const lines = text.slice(start).split("\n").slice(1);
  const table = lines.slice(lines.findIndex((line) => line.startsWith("|")));
  return table
    .slice(
      0,
      table.findIndex((line) => !line.startsWith("|")),
    )
    .slice(2) // the header and its rule
    .map((line) =>
      line
        .split("|")
        .slice(1, -1)
        .map((cell) => cell.trim().replace(/`/g, "")),
    );
}

/** The rows the rules give, in the README's columns. */
function ruleRows(): string[][] {
  return Object.entries(MODEL_RULES).map(([model, rules]) => [
    model,
    rules.resolutions.join(", "),
    rules.aspectRatios.join(", "),
    describeDurations(rules),
    rules.text,
    rules.audio,
    rules.source,
  ]);
}

describe("the README's table of models", () => {
  it("lists every model with the resolutions, aspect ratios, durations and inputs its rules take", () => {
    expect(readmeRows()).toEqual(ruleRows());
  });
});
