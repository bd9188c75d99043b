// SHA-256 of files and of bytes in passing: the one way reel (and its sandbox) names content. A file
// is hashed through a descriptor, so the caller decides how it is opened (the manifest opens media
// without following links, and judges and hashes that one descriptor); a path is only opened and
// handed to it.
import { createHash, type Hash } from "node:crypto";
import { type FileHandle, open } from "node:fs/promises";

/** 1 MiB reads: few enough syscalls that hashing runs at the speed of SHA-256 itself. */
export const READ_CHUNK = 1 << 20;

/** sha256 hex of everything the descriptor holds, read from its start. */
export async function sha256OfOpened(handle: FileHandle): Promise<string> {
  const hash = createHash("sha256");
  const buffer = Buffer.allocUnsafe(READ_CHUNK);
  for (let position = 0; ;) {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) break;
    hash.update(buffer.subarray(0, bytesRead));
    position += bytesRead;
  }
  return hash.digest("hex");
}

/** sha256 hex of the file at `path`: for files reel wrote itself (its saved videos). */
export async function sha256File(path: string): Promise<string> {
  const handle = await open(path, "r");
  try {
    return await sha256OfOpened(handle);
  } finally {
    await handle.close();
  }
}

/**
 * Bytes as they stream past (a fetched source, a received upload): their SHA-256, their count, and
 * the first `headBytes` of them (to recognise the format without reading the file back).
 */
export class StreamTally {
  private readonly hash: Hash = createHash("sha256");
  size = 0;
  head: Buffer = Buffer.alloc(0);

  constructor(private readonly headBytes: number) {}

  add(chunk: Buffer): void {
    this.hash.update(chunk);
    this.size += chunk.length;
    if (this.head.length < this.headBytes)
      this.head = Buffer.concat([this.head, chunk.subarray(0, this.headBytes - this.head.length)]);
  }

  /** The hex digest; call once, after the last chunk. */
  sha256(): string {
    return this.hash.digest("hex");
  }
}
