// The fast parser (js-yaml) and the thorough one (`yaml`) must read every manifest the same way:
// values from the first, positions of problems from the second.
import { readFile } from "node:fs/promises";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { locate } from "../../src/manifest/parse/locate.js";
import { parseThorough, parseYaml } from "../../src/manifest/parse/parse-yaml.js";
import { REPO } from "./helpers.js";

function both(text: string) {
  const fast = parseYaml(text);
  const thorough = parseThorough(text);
  if (!fast.ok || !thorough.ok) throw new Error("expected both parsers to accept the text");
  return { fast: fast.parsed, thorough: thorough.parsed };
}

const SPECIAL = `version: 1
ints: [0, -5, +7, 0o17, 0x1F, 9007199254740991, 9007199254740993, -9223372036854775808, 18446744073709551616]
floats: [1.5, -0.0, 1e3, .inf, -.Inf, .nan]
words: [yes, no, on, off, True, FALSE, null, ~, Null, "", '16:9', 16:9, 1_000, 0b101, 1_0.5, .5, 5., 0x_1]
text: |
  two lines
  of text
folded: >-
  one
  line
quoted: "tab\\tand \\u00e9"
empty:
anchors:
  base: &b { a: [1, 2] }
  copy: *b
flow: { x: [a, { y: z }] }
`;

describe("parseYaml", () => {
  it("gives the same values as the thorough parser on special scalars", () => {
    const { fast, thorough } = both(SPECIAL);
    // As JSON, so that .nan and -0.0 compare as written.
    expect(JSON.stringify(fast.value)).toBe(JSON.stringify(thorough.value));
    expect((fast.value as { ints: unknown[] }).ints).toEqual([
      0,
      -5,
      7,
      15,
      31,
      9007199254740991,
      "9007199254740993",
      "-9223372036854775808",
      "18446744073709551616",
    ]);
  });

  it("gives the same values and video positions on the examples", async () => {
    for (const file of ["actor.yaml", "avatar.yaml", "mixed.yaml"]) {
      const text = await readFile(path.join(REPO, "manifests", file), "utf8");
      const { fast, thorough } = both(text);
      expect(fast.value).toEqual(thorough.value);
      const videos = (fast.value as { videos: object[] }).videos;
      videos.forEach((video, i) => {
        expect(fast.positionOfObject(video)).toEqual(locate(thorough, ["videos", i]));
      });
    }
  });

  it("gives the same values on generated documents", () => {
    const scalar = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.double({ noNaN: true }),
      fc.boolean(),
      fc.constant(null),
      fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map((b) => b.toString()),
    );
    const tree = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: "small" },
        scalar,
        fc.array(tie("node")),
        fc.dictionary(fc.string(), tie("node")),
      ),
    })).node;
    fc.assert(
      fc.property(tree, fc.boolean(), (value, flow) => {
        const text = stringify({ root: value }, { collectionStyle: flow ? "flow" : "block" });
        const { fast, thorough } = both(text);
        expect(fast.value).toEqual(thorough.value);
      }),
      { numRuns: 150 },
    );
  });

  it("keeps integers above 2^53 exact in both parsers", () => {
    const { fast, thorough } = both("a: 1800000000000000001\nb: -9223372036854775807\n");
    expect(fast.value).toEqual({ a: "1800000000000000001", b: "-9223372036854775807" });
    expect(thorough.value).toEqual(fast.value);
  });
});
