// Values read from a manifest, kept apart from its text. A string the YAML parser returns is a slice
// of the file's whole text (V8 shares the characters), and keeps all of it alive for as long as the
// value lives: a run of 100,000 videos held its manifest's source to the end through its jobs.

/** The same text in a string of its own. */
export function detached(text: string): string {
  return Buffer.from(text, "utf8").toString("utf8");
}
