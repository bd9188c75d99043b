// The two ways text from a manifest or the service enters the report page, each escaped for its
// context: HTML text and quoted attribute values, and JSON inside a <script> element.

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Safe as element text and as a quoted attribute value (either quote). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/**
 * JSON to embed in `<script type="application/json">`. The HTML parser ends a script element at the
 * first `</script` whatever the JSON means, and `<!--` switches it into an escaped state, so no `<`
 * may appear literally; `>` and `&` are escaped too so the text is inert in any HTML context.
 * The escapes are inside JSON strings (the only place these characters occur), where `\u003c` reads
 * back as `<`. U+2028/U+2029 are escaped so the text stays valid even if read as script.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => {
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
  });
}

/** A path relative to OUT, as a relative URL: each segment percent-encoded, so no segment can carry a scheme, `?` or `#`. */
export function relativeHref(path: string): string {
  // Characters encodeURIComponent keeps as they are, and the separator: most paths are only these
  // (two per job in a page of 100,000), and are their own href.
  if (/^[\w.~/-]*$/.test(path)) return path;
  return path.split("/").map(encodeURIComponent).join("/");
}
