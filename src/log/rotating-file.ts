// A log file cut into parts by size, so a watch left for weeks writes a bounded log: past partBytes,
// the file is renamed to its first earlier part (`.1.log`, the earlier ones shifted up, the oldest
// beyond partsKept deleted) and a new file of the same name is opened. The name the user was told
// (the `Log:` line) is always the newest part.
//
// Lines go to the file from the main thread as pino.destination writes them (pino-roll's worker
// thread would add a hop where a line is lost to kill -9, and another stream to flush at exit): each
// part is a pino.destination, so pino flushes it synchronously at exit, as it did the one file.
import { fstatSync, openSync, renameSync, rmSync } from "node:fs";
import { type DestinationStream, pino } from "pino";
import { logPartPath } from "./log-files.js";

type FileDestination = ReturnType<typeof pino.destination>;

export interface RotatingFileOptions {
  /** The log's path; its earlier parts are named after it (logPartPath). */
  readonly path: string;
  /** A part is cut once it holds this many bytes (the line that passes it ends the part; the cut is
   * made when the next line comes). */
  readonly partBytes: number;
  /** Earlier parts kept beside the one being written (at least 1). */
  readonly partsKept: number;
}

export class RotatingFile implements DestinationStream {
  private current: FileDestination;
  private written: number;

  /** `fd`: the log opened already (synchronously, by the caller, who says why it could not be). */
  constructor(
    private readonly options: RotatingFileOptions,
    fd: number,
  ) {
    if (options.partsKept < 1) throw new RangeError("a log keeps at least one earlier part");
    this.current = pino.destination({ dest: fd, sync: false });
    this.written = fstatSync(fd).size;
  }

  write(line: string): void {
    // Cut when the next line comes, not after the line that filled the part: the newest part, the
    // name the user was told, then never ends a run empty.
    if (this.written >= this.options.partBytes) this.cut();
    this.current.write(line);
    this.written += Buffer.byteLength(line);
  }

  flush(callback?: (error?: Error) => void): void {
    this.current.flush(callback ?? (() => {}));
  }

  flushSync(): void {
    this.current.flushSync();
  }

  private cut(): void {
    const { path, partsKept } = this.options;
    // Counted again from here whatever happens: a cut that failed is tried after another part.
    this.written = 0;
    let fd: number;
    try {
      rmSync(logPartPath(path, partsKept), { force: true });
      for (let n = partsKept - 1; n >= 1; n--) renameIfThere(logPartPath(path, n), logPartPath(path, n + 1));
      renameSync(path, logPartPath(path, 1));
      fd = openSync(path, "a", 0o600);
    } catch (error) {
      // Lines keep going where they went (the renamed part, if the rename was done): a log is never
      // worth stopping a run for.
      this.current.write(
        `${JSON.stringify({ level: 40, time: Date.now(), msg: `log not cut: ${(error as Error).message}` })}\n`,
      );
      return;
    }
    const previous = this.current;
    this.current = pino.destination({ dest: fd, sync: false });
    // The lines it still holds land in the part it became (the descriptor follows the rename); it
    // closes once they are written, and is flushed at exit if that comes first.
    previous.end();
  }
}

function renameIfThere(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}
