// A manifest file's text: a regular file, not too large, UTF-8 (a byte order mark dropped, old Mac
// line ends read as line breaks), or the one problem that says why not.
import { readFile, stat } from "node:fs/promises";
import { isUtf8 } from "node:buffer";
import { PROBLEM_CODES, type Problem } from "../problem.js";

export const DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024;

/**
 * UTF-16 or UTF-32 (as some Windows editors and PowerShell's `>` save text), told by the byte order
 * mark, or without one by the zero bytes of ASCII text: one in two (UTF-16), three in four (UTF-32).
 */
export function wideEncoding(bytes: Uint8Array): string | undefined {
  const [a, b, c, d] = bytes;
  if (a === 0xff && b === 0xfe && c === 0 && d === 0) return "UTF-32";
  if (a === 0 && b === 0 && c === 0xfe && d === 0xff) return "UTF-32";
  if ((a === 0xff && b === 0xfe) || (a === 0xfe && b === 0xff)) return "UTF-16";
  const head = bytes.subarray(0, 512 - (Math.min(bytes.length, 512) % 4));
  if (head.length < 4) return undefined;
  const zeros = [0, 0, 0, 0];
  head.forEach((byte, i) => {
    if (byte === 0) zeros[i % 4]!++;
  });
  const quarter = head.length / 4;
  const mostly = (n: number) => n >= 0.9 * quarter;
  const few = (n: number) => n <= 0.1 * quarter;
  const [z0, z1, z2, z3] = zeros as [number, number, number, number];
  if (
    (mostly(z1) && mostly(z2) && mostly(z3) && few(z0)) ||
    (mostly(z0) && mostly(z1) && mostly(z2) && few(z3))
  )
    return "UTF-32";
  if ((mostly(z1) && mostly(z3) && few(z0) && few(z2)) || (mostly(z0) && mostly(z2) && few(z1) && few(z3)))
    return "UTF-16";
  return undefined;
}

/** The text of the manifest at `abs`, or why it can't be read (said at the file's `file` name). */
export async function readManifestText(
  abs: string,
  options: { readonly maxFileBytes?: number },
): Promise<{ ok: true; text: string } | { ok: false; problem: Omit<Problem, "file"> }> {
  const refuse = (problem: Omit<Problem, "file">) => ({ ok: false, problem }) as const;
  const maxBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  let text: string;
  try {
    const info = await stat(abs);
    if (!info.isFile()) {
      // A named pipe would block the read for ever (and a thread of libuv's pool with it).
      return refuse({
        line: 0,
        col: 0,
        message: "not a regular file (a named pipe, socket or device?); a manifest must be a file",
        code: PROBLEM_CODES.readFailed,
      });
    }
    if (info.size > maxBytes) {
      return refuse({
        line: 1,
        col: 1,
        message: `the file is ${info.size} bytes; a manifest may have at most ${maxBytes} bytes`,
        code: PROBLEM_CODES.tooLarge,
      });
    }
    const bytes = await readFile(abs);
    const wide = wideEncoding(bytes);
    if (wide) {
      // Read as UTF-8, every other byte is a NUL: said for what it is, before any other message.
      return refuse({
        line: 1,
        col: 1,
        message: `this file is ${wide} text, not UTF-8; save it as UTF-8`,
        code: PROBLEM_CODES.readFailed,
      });
    }
    // Without the byte order mark some editors write: it would count as a column of line 1. A lone
    // CR (old Mac line ends) is a line break to YAML but not to the position counter, which would
    // place every problem on line 1; one character for one keeps every offset.
    text = bytes
      .toString("utf8")
      .replace(/^\uFEFF/, "")
      .replace(/\r(?!\n)/g, "\n");
    if (!isUtf8(bytes)) {
      // Read as UTF-8 anyway, a Latin-1 "é" would reach the service as "\uFFFD": a paid video of
      // the wrong text.
      const bad = text.indexOf("\uFFFD");
      const before = text.slice(0, Math.max(0, bad));
      const line = before.split("\n").length;
      return refuse({
        line,
        col: bad - (before.lastIndexOf("\n") + 1) + 1,
        message: "the file is not UTF-8 text (Latin-1 or another legacy encoding?); save it as UTF-8",
        code: PROBLEM_CODES.readFailed,
      });
    }
  } catch (error) {
    return refuse({
      line: 0,
      col: 0,
      message: `cannot read: ${(error as Error).message}`,
      code: PROBLEM_CODES.readFailed,
    });
  }

  return { ok: true, text };
}
