// `--events FILE`: the stream as JSON lines, appended (never truncated), each batch of lines written
// whole by one write as the store commits it, so `tail -f` sees whole lines as they come. A file that
// ends with the events of a process killed before it wrote them all gets them first (catchUp).
import { closeSync, fstatSync, openSync, readSync, writeSync } from "node:fs";
import { systemReason } from "../output/atomic-write.js";
import { UsageError } from "../errors/usage.js";
import type { EventRecords } from "../state/job-store.js";
import { streamEventOf } from "./stored.js";
import type { StreamEvent } from "./types.js";

/** How much of the file's end is read for its last line. */
const TAIL_BYTES = 64 * 1024;

export class EventsFile {
  private broken = false;

  private constructor(
    private readonly fd: number,
    readonly path: string,
    private readonly warn: (line: string) => void,
  ) {}

  /** Opens (creates) `path` to append; a UsageError names what is wrong with it. */
  static open(path: string, warn: (line: string) => void): EventsFile {
    let fd: number;
    try {
      fd = openSync(path, "a+");
    } catch (error) {
      throw new UsageError(
        `cannot write the events file ${path} (${systemReason(error)}); give --events a file in a folder you can write`,
      );
    }
    return new EventsFile(fd, path, warn);
  }

  /** The runner and seq of the file's last line, if it has one that reel wrote. */
  lastLine(): { runner: string; seq: number } | undefined {
    const size = fstatSync(this.fd).size;
    if (size === 0) return undefined;
    const length = Math.min(size, TAIL_BYTES);
    const buffer = Buffer.alloc(length);
    readSync(this.fd, buffer, 0, length, size - length);
    const lines = buffer.toString("utf8").split("\n").filter(Boolean);
    try {
      const last = JSON.parse(lines[lines.length - 1] ?? "") as Partial<StreamEvent>;
      return typeof last.runner === "string" && typeof last.seq === "number"
        ? { runner: last.runner, seq: last.seq }
        : undefined;
    } catch {
      return undefined; // a line cut short (a full disk): nothing to resume from
    }
  }

  /**
   * The events the runner of the file's last line recorded after it: those a process killed between
   * the store's commit and its write to this file did not write.
   */
  async catchUp(store: Pick<EventRecords, "readEvents">): Promise<void> {
    const last = this.lastLine();
    if (!last) return;
    for (let afterId = last.seq; ;) {
      const rows = await store.readEvents({ afterId, limit: 5_000 });
      if (rows.length === 0) return;
      afterId = rows[rows.length - 1]!.id;
      this.write(
        rows.flatMap((row) => {
          const event = row.runner === last.runner ? streamEventOf(row) : undefined;
          return event ? [event] : [];
        }),
      );
    }
  }

  /** Writes `events`, one line each, in one write. A file that cannot be written is said once. */
  write(events: readonly StreamEvent[]): void {
    if (this.broken || events.length === 0) return;
    let text = "";
    for (const event of events) text += `${JSON.stringify(event)}\n`;
    try {
      const bytes = Buffer.from(text);
      for (let at = 0; at < bytes.length;) at += writeSync(this.fd, bytes, at);
    } catch (error) {
      this.broken = true;
      this.warn(
        `cannot write the events file ${this.path} (${systemReason(error)}): no more events are written to it; reel events reads them from the store`,
      );
    }
  }

  close(): void {
    closeSync(this.fd);
  }
}
