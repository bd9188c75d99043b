// The reports of a big folder are written in pieces (output/atomic-write.ts's writeFileAtomic): big
// enough that the writes cost little, small enough that the whole file never sits in memory.

/** About 1 MB of text per write. */
export const PIECE_CHARS = 1 << 20;

/** Bytes per piece of TextPieces, and the room kept free in it for the next text. */
const PIECE_BYTES = 1 << 20;
const ROOM = 1 << 16;

/**
 * Text gathered as UTF-8 in one buffer, to write a piece at a time. Text kept as strings until its
 * piece was full (a megabyte of joined strings) outlived the young generation's collections, which
 * copied it each time: a third of a 100,000-job report's CPU went to the collector. In the buffer it
 * is bytes outside the heap, and each row's strings die young.
 */
export class TextPieces {
  private readonly buffer = Buffer.allocUnsafe(PIECE_BYTES);
  private used = 0;
  /** A text that did not fit: written after the buffer. */
  private over: string | undefined;

  /** Adds `text`; returns whether the pieces should be taken (and written) before the next add. */
  add(text: string): boolean {
    // UTF-8 takes at most 3 bytes per UTF-16 unit; the buffer keeps ROOM free after each add, so
    // only a text of tens of thousands of characters goes over.
    if (text.length * 3 > this.buffer.length - this.used) {
      this.over = text;
      return true;
    }
    this.used += this.buffer.write(text, this.used);
    return this.used > PIECE_BYTES - ROOM;
  }

  /** What was added since the last take, in order: each piece valid until the next add. */
  *take(): Generator<Uint8Array | string> {
    if (this.used > 0) yield this.buffer.subarray(0, this.used);
    this.used = 0;
    if (this.over !== undefined) yield this.over;
    this.over = undefined;
  }
}
