// The API key, taken out of everything the service sends back. A service may echo the request in an
// error body or a failure reason ("invalid header Authorization: Bearer sk-..."), and whatever the
// client returns is stored (state file, records, results.jsonl, index.html) and printed: only the
// log file scrubs on its own. So the client scrubs every string that comes from the service, at
// the boundary, before anything else sees it.
import { REDACTED } from "../log/logger.js";

export type Scrub = (text: string) => string;

/**
 * Derived forms shorter than this are not looked for: a few base64 characters occur by chance in
 * ordinary text, and replacing them would garble messages without protecting anything.
 */
const MIN_DERIVED_LENGTH = 8;

/**
 * Characters that show nothing: a key split by one of them still reads as the key on a screen or
 * in a file. They are dropped from the service's text before the key is looked for.
 */
const INVISIBLE = /[\u00AD\u200B-\u200F\u2060-\u2064\uFEFF]/g;

/**
 * Returns a function that replaces `secret` in a string, in any letter case, with its URL
 * encodings, hex, and base64 forms.
 */
export function makeScrubber(secret: string): Scrub {
  if (secret === "") return (text) => text;
  const forms = new Set<string>([secret, Buffer.from(secret, "utf8").toString("hex")]);
  const encoded = encodeURIComponent(secret);
  forms.add(encoded);
  forms.add(encoded.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()));
  forms.add(encoded.replace(/%20/g, "+")); // an HTML form's encoding
  for (const core of base64Cores(Buffer.from(secret, "utf8"))) {
    forms.add(core);
    forms.add(core.replace(/\+/g, "-").replace(/\//g, "_")); // base64url
  }
  const wanted = [...forms]
    .filter((form) => form === secret || form.length >= MIN_DERIVED_LENGTH)
    // Longest first: a form that contains another is replaced whole.
    .sort((a, b) => b.length - a.length);
  // One pass, case-insensitive: an upper-cased key (or hex) is the key still. Base64 is
  // case-sensitive, so this also matches a few strings that are not its forms: at 8 characters and
  // more, only by a chance too small to garble real messages.
  const pattern = new RegExp(wanted.map(escapeRegExp).join("|"), "gi");
  return (text) => {
    const visible = text.replace(INVISIBLE, "");
    pattern.lastIndex = 0;
    return pattern.test(visible) ? visible.replace(pattern, REDACTED) : text;
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * The base64 characters that encode `bytes` whatever comes before and after them, at each of the
 * three alignments the secret can have inside a longer encoded text ("Bearer <key>" encoded, say):
 * the characters that mix in a neighbour's bits are left out.
 */
function base64Cores(bytes: Buffer): string[] {
  const cores: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const text = Buffer.concat([Buffer.alloc(offset), bytes])
      .toString("base64")
      .replace(/=+$/, "");
    const first = Math.ceil((offset * 8) / 6); // characters that hold a bit of the filler
    const last = Math.floor(((offset + bytes.length) * 8) / 6); // characters whole within the secret
    if (last > first) cores.push(text.slice(first, last));
  }
  return cores;
}

/** Scrubs, in place, every string in a decoded JSON answer (object values and array items, deeply). */
export function scrubStrings<T>(value: T, scrub: Scrub): T {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === "string") value[i] = scrub(item);
      else if (item !== null && typeof item === "object") scrubStrings(item, scrub);
    }
  } else if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const item = record[key];
      if (typeof item === "string") record[key] = scrub(item);
      else if (item !== null && typeof item === "object") scrubStrings(item, scrub);
    }
  }
  return value;
}
