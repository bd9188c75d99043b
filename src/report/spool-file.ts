// A part of a file made before what goes ahead of it is known: the page's data is made on the same
// pass as its counts, which its head shows, so the data waits here, beside the page, until the head is
// written, then is copied after it. A temp file by its name (tempPathFor): a process killed while it
// exists leaves one that the next run's start removes, as it does a page's own temp file.
import { type FileHandle, open, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import { asDiskFailure, tempPathFor } from "../output/atomic-write.js";

/** Bytes read back per piece. */
const READ_BYTES = 1 << 20;

export class SpoolFile {
  private constructor(
    private readonly path: string,
    private readonly handle: FileHandle,
  ) {}

  /** A new spool beside `target`, the file it becomes part of. */
  static async beside(target: string): Promise<SpoolFile> {
    const path = tempPathFor(target);
    try {
      return new SpoolFile(path, await open(path, "wx+", 0o600));
    } catch (error) {
      throw asDiskFailure(error, dirname(path)) ?? error;
    }
  }

  async write(piece: string | Uint8Array): Promise<void> {
    try {
      await this.handle.writeFile(piece);
    } catch (error) {
      throw asDiskFailure(error, dirname(this.path)) ?? error;
    }
  }

  /** What was written, from its start, a piece at a time; each piece is valid until the next is asked for. */
  async *pieces(): AsyncGenerator<Uint8Array> {
    const buffer = Buffer.allocUnsafe(READ_BYTES);
    for (let at = 0; ;) {
      const { bytesRead } = await this.handle.read(buffer, 0, READ_BYTES, at);
      if (bytesRead === 0) return;
      at += bytesRead;
      yield buffer.subarray(0, bytesRead);
    }
  }

  /** Closes and removes the spool; called once, whatever happened. */
  async remove(): Promise<void> {
    await this.handle.close().catch(() => {});
    await unlink(this.path).catch(() => {});
  }
}
