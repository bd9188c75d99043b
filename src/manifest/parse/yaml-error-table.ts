// The `yaml` package's error codes in plain words: what yaml-hints.ts says of an error no rule of its
// own recognised.

/** One error or warning of the `yaml` package. */
export interface YamlIssue {
  readonly code: string;
  readonly message: string;
  readonly pos: readonly [number, number];
}

/**
 * The `yaml` package's error codes in plain words, for the errors no rule above recognised. Codes
 * with several causes are told apart by the package's message.
 */
const CODE_MESSAGES: Readonly<Record<string, string | readonly (readonly [RegExp, string])[]>> = {
  ALIAS_PROPS: "an alias (*name) cannot have an anchor or a tag of its own",
  BAD_ALIAS:
    "an anchor (&name) or alias (*name) needs a name; if & or * belongs to a text, put the text in quotes",
  BAD_DIRECTIVE:
    "a line starting with % is read as a YAML directive and this one is not valid; if % belongs to a value, put the value in quotes",
  BAD_DQ_ESCAPE:
    'an unknown \\ escape inside "...": write \\\\ for a backslash, or use single quotes, where \\ has no special meaning',
  BAD_INDENT: [
    [
      /^All sequence items/,
      'this list item\'s "-" is not in the same column as the items before it: line them up',
    ],
    [/^Flow (map|sequence)/, "a { or [ opened above is never closed: add the closing } or ]"],
    [
      /./,
      "this line's indentation does not fit the lines around it: line it up with the fields of its block",
    ],
  ],
  BAD_PROP_ORDER: "an anchor (&name) or tag (!tag) must come after the - or ? that starts the item",
  BAD_SCALAR_START: "this value starts with a character YAML reserves (@, `, %): put the value in quotes",
  BLOCK_AS_IMPLICIT_KEY:
    'this value is read as the start of a mapping: a value containing ": " must be in quotes, and a line under a field that has a value must not be indented more than the field',
  BLOCK_IN_FLOW:
    "inside { } or [ ], items are written on one line, separated by commas: no indented blocks or lists",
  DUPLICATE_KEY: "this key is already used in its mapping",
  KEY_OVER_1024_CHARS:
    "this line reads as a key longer than 1024 characters: a long text must follow its key's colon on the same line, or be in quotes",
  MISSING_CHAR: [
    [
      /^Sequence item without - indicator/,
      "this line is indented differently from the lines around it: give it the same indentation as the other fields of its block",
    ],
    [
      /^Implicit map keys need to be followed by map values/,
      'this line has no ": " after its field name: write name: value',
    ],
    [/^Missing , between flow/, "a comma is missing between two items inside { } or [ ]"],
    [/^Missing , or : between flow/, 'a comma or ": " is missing inside { } or [ ]'],
    [
      /^Missing space after : in flow/,
      'a ":" inside { } must be followed by a space: write {voice: 17}, not {voice:17}',
    ],
    [
      /^Comments must be separated/,
      'a comment starts with " #" (a space before the #); a # inside a value needs the value in quotes',
    ],
    [/^Tags and anchors must be separated/, "an anchor (&name) or tag (!tag) must be followed by a space"],
    [/./, "something is missing here (a quote, a bracket, a colon or a dash)"],
  ],
  MULTILINE_IMPLICIT_KEY:
    "this line and the next read as one key: a field is written name: value on one line (a colon and a space after the name)",
  MULTIPLE_ANCHORS: "a value can have only one anchor (&name)",
  MULTIPLE_DOCS: "a manifest file holds one YAML document; this one has several ('---')",
  MULTIPLE_TAGS: "a value can have only one tag (!tag)",
  NON_STRING_KEY: "a key must be a plain name, not a list or a mapping",
  TAB_AS_INDENT:
    "this line is indented with a tab: YAML indents with spaces only; replace the tab with spaces",
  UNEXPECTED_TOKEN: [
    [
      /^Unexpected \S+ at node end/,
      "something follows a value that has ended (a closing quote or bracket): put the whole value in quotes",
    ],
    [/^Unexpected , in flow/, "an extra comma inside { } or [ ]"],
    [/^Unexpected block-seq-ind/, 'a value cannot start with "- " unless it is in quotes'],
    [/./, "a character YAML does not expect here: if it belongs to a value, put the value in quotes"],
  ],
};

export function tableMessage(issue: YamlIssue): string {
  const entry = CODE_MESSAGES[issue.code];
  const parser = issue.message.replace(/\s+/g, " ").trim();
  if (typeof entry === "string") return entry;
  const matched = entry?.find(([pattern]) => pattern.test(parser));
  return matched ? matched[1] : `YAML syntax: ${parser}`;
}
