// The CLI's output streams as the entry point hands them to the commands: on a terminal, what they
// write is broken at word boundaries to the terminal's width (80 when it does not say), so that a
// long message, summary or table line never has the terminal cut a word in two. Elsewhere (a pipe, a
// file) they are the streams themselves: one message stays one line for scripts and logs.
//
// Left whole: a line that starts with "{" or "[" (a JSON document: a break inside one of its strings
// would change it), and whatever is written to the stream underneath (rawStream): the live display
// draws its own lines to the width, with cursor moves of its own.
import { visibleWidth, wrapText } from "./text-wrap.js";

const RAW = Symbol("raw stream");

/** Columns when a terminal does not say. */
const DEFAULT_COLUMNS = 80;

type Stream = NodeJS.WritableStream & { isTTY?: boolean; columns?: number; rows?: number };

/** `stream`, its text wrapped to the terminal's width when it is one (see above). */
export function wrappedOnTerminal<T extends Stream>(stream: T): T {
  if (stream.isTTY !== true) return stream;
  /** Columns already written on the current line. */
  let column = 0;
  const write = (chunk: unknown, ...rest: unknown[]): boolean => {
    const target = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    if (typeof chunk !== "string") return target(chunk, ...rest);
    const width = (stream.columns ?? 0) > 0 ? stream.columns! : DEFAULT_COLUMNS;
    // A line as wide as the terminal leaves the cursor past its edge: one column spare.
    const room = width - 1;
    const text = wrapText(chunk, room, { start: column, keep: (line) => /^[{[]/.test(line) });
    const tail = text.split("\n");
    // Still on the line it started on, or on a new one.
    column = (tail.length === 1 ? column : 0) + visibleWidth(tail.at(-1)!);
    return target(text, ...rest);
  };
  return new Proxy(stream, {
    get(target, property) {
      if (property === "write") return write;
      if (property === RAW) return target;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The stream under `stream` if it wraps its text (see wrappedOnTerminal), else `stream`. */
export function rawStream<T extends object>(stream: T): T {
  return ((stream as Record<symbol, unknown>)[RAW] as T | undefined) ?? stream;
}
