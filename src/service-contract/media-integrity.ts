// Magic bytes say what a file claims to be; these checks catch the files that claim it but are cut
// short or broken (an interrupted copy, a half-downloaded URL), which the service refuses as
// "corrupted". The sandbox applies them to uploads, and `reel validate` to a manifest's files, so
// that such a file is a problem found before anything is sent. Each check reads a few headers at
// known offsets, never the whole file, so a 200 MB file costs a handful of small reads.
import type { FileHandle } from "node:fs/promises";
import { open } from "node:fs/promises";
import type { MediaFormat } from "./media-format.js";

async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await file.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}

/** RIFF (WAV, WebP): the size in the header must fit in the file. 0 and 0xFFFFFFFF mean "unknown" (streamed writers). */
async function checkRiff(file: FileHandle, size: number): Promise<string | undefined> {
  if (size < 12) return "the RIFF header is incomplete";
  const declared = (await readAt(file, 4, 4)).readUInt32LE(0);
  if (declared === 0 || declared === 0xffffffff) return undefined;
  if (declared + 8 > size) return `the header announces ${declared + 8} bytes but the file has ${size}`;
  return undefined;
}

/** MP4: top-level boxes must tile the file, and the index (`moov`) must be among them. */
async function checkMp4(file: FileHandle, size: number): Promise<string | undefined> {
  let offset = 0;
  let sawMoov = false;
  while (offset < size) {
    if (size - offset < 8) return "the file ends inside a box header";
    const header = await readAt(file, offset, 16);
    let boxSize = header.readUInt32BE(0);
    const type = header.toString("latin1", 4, 8);
    if (boxSize === 1) {
      if (header.length < 16) return "the file ends inside a box header";
      boxSize = Number(header.readBigUInt64BE(8));
    } else if (boxSize === 0) {
      boxSize = size - offset;
    }
    if (boxSize < 8) return `box '${type}' at byte ${offset} has an impossible size`;
    if (offset + boxSize > size) return `box '${type}' at byte ${offset} runs past the end of the file`;
    if (type === "moov") sawMoov = true;
    offset += boxSize;
  }
  return sawMoov ? undefined : "it has no 'moov' box (the index of the video)";
}

async function checkPng(file: FileHandle, size: number): Promise<string | undefined> {
  if (size < 8 + 25 + 12) return "it is too short to hold an image";
  if ((await readAt(file, 12, 4)).toString("latin1") !== "IHDR") return "the IHDR chunk is missing";
  if ((await readAt(file, size - 8, 4)).toString("latin1") !== "IEND") return "the IEND chunk is missing";
  return undefined;
}

async function checkJpeg(file: FileHandle, size: number): Promise<string | undefined> {
  if (size < 4) return "it is too short to hold an image";
  // Some writers pad after the end-of-image marker; look for it near the end rather than at it.
  const tailLength = Math.min(size, 64);
  const tail = await readAt(file, size - tailLength, tailLength);
  for (let i = tail.length - 2; i >= 0; i--) if (tail[i] === 0xff && tail[i + 1] === 0xd9) return undefined;
  return "the end-of-image marker is missing";
}

async function checkGif(file: FileHandle, size: number): Promise<string | undefined> {
  if (size < 14) return "it is too short to hold an image";
  const last = await readAt(file, size - 1, 1);
  return last[0] === 0x3b ? undefined : "the trailer byte is missing";
}

/** OGG: the last page must carry the end-of-stream flag. Pages are at most 65307 bytes. */
async function checkOgg(file: FileHandle, size: number): Promise<string | undefined> {
  const tailLength = Math.min(size, 65307 + 27);
  const tail = await readAt(file, size - tailLength, tailLength);
  const last = tail.lastIndexOf("OggS", undefined, "latin1");
  if (last < 0 || last + 6 > tail.length) return "no OGG page found at the end";
  const flags = tail[last + 5] ?? 0;
  return (flags & 0x04) !== 0 ? undefined : "the last page is not marked end-of-stream";
}

/** MP3: after an optional ID3v2 tag, an MPEG audio frame must start. */
async function checkMp3(file: FileHandle, size: number): Promise<string | undefined> {
  let offset = 0;
  const head = await readAt(file, 0, 10);
  if (head.toString("latin1", 0, 3) === "ID3") {
    if (head.length < 10) return "the ID3 tag is incomplete";
    // Syncsafe integer: 7 bits per byte.
    const tagSize = ((head[6] ?? 0) << 21) | ((head[7] ?? 0) << 14) | ((head[8] ?? 0) << 7) | (head[9] ?? 0);
    const footer = ((head[5] ?? 0) & 0x10) !== 0 ? 10 : 0;
    offset = 10 + tagSize + footer;
  }
  if (offset + 4 > size) return "no audio frame follows the ID3 tag";
  const frame = await readAt(file, offset, 2);
  if (frame[0] !== 0xff || ((frame[1] ?? 0) & 0xe0) !== 0xe0) return `no MPEG audio frame at byte ${offset}`;
  return undefined;
}

const CHECKS: Readonly<Record<MediaFormat, (file: FileHandle, size: number) => Promise<string | undefined>>> =
  {
    png: checkPng,
    jpeg: checkJpeg,
    gif: checkGif,
    webp: checkRiff,
    wav: checkRiff,
    mp4: checkMp4,
    ogg: checkOgg,
    mp3: checkMp3,
  };

/** Why the stored file at `path` is not a whole `format` file, or undefined when it looks whole. */
export async function findCorruption(
  path: string,
  format: MediaFormat,
  size: number,
): Promise<string | undefined> {
  const file = await open(path, "r");
  try {
    return await findCorruptionIn(file, format, size);
  } finally {
    await file.close();
  }
}

/** findCorruption of a file already open. */
export function findCorruptionIn(
  file: FileHandle,
  format: MediaFormat,
  size: number,
): Promise<string | undefined> {
  return CHECKS[format](file, size);
}
