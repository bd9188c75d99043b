// Just enough of the MP4 box structure (ISO/IEC 14496-12) for the sandbox's result videos: find a
// box by its path, read a video's width, height and duration, and set the duration of a one-frame
// clip (result-video.ts). Versions 0 and 1 of each box are read and written; nothing is resized.

/** The containers this module descends into. */
const CONTAINERS = new Set(["moov", "trak", "mdia", "minf", "stbl", "edts"]);

interface Box {
  readonly type: string;
  /** Offset of the box's payload (after its size and type; a full box's version and flags come first). */
  readonly body: number;
  readonly end: number;
}

function* childrenOf(buf: Buffer, start: number, end: number): Generator<Box> {
  let at = start;
  while (at + 8 <= end) {
    let size = buf.readUInt32BE(at);
    const type = buf.toString("latin1", at + 4, at + 8);
    let header = 8;
    if (size === 1) {
      size = Number(buf.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) {
      size = end - at;
    }
    if (size < header || at + size > end) throw new Error(`damaged MP4: box ${type} at ${at}`);
    yield { type, body: at + header, end: at + size };
    at += size;
  }
}

/** The first box at `path` (e.g. ["moov", "trak", "mdia", "mdhd"]), or undefined. */
export function findBox(buf: Buffer, path: readonly string[]): Box | undefined {
  let start = 0;
  let end = buf.length;
  let found: Box | undefined;
  for (const [i, type] of path.entries()) {
    found = undefined;
    for (const box of childrenOf(buf, start, end)) {
      if (box.type === type) {
        found = box;
        break;
      }
    }
    if (!found) return undefined;
    if (i < path.length - 1 && !CONTAINERS.has(type)) return undefined;
    start = found.body;
    end = found.end;
  }
  return found;
}

function mustFind(buf: Buffer, path: readonly string[]): Box {
  const box = findBox(buf, path);
  if (!box) throw new Error(`not an MP4 this sandbox made: no ${path.join("/")}`);
  return box;
}

/** A field of a full box after version and flags, `v0` / `v1` bytes in; 4 or 8 bytes wide. */
interface TimeField {
  readonly box: Box;
  readonly offset: number;
  readonly wide: boolean;
}

/** Where a field of a full box lies: `wide` / `narrow` bytes after version and flags (version 1 / 0). */
function timeFields(
  buf: Buffer,
  box: Box,
): { version: number; at: (wide: number, narrow: number) => TimeField } {
  const version = buf.readUInt8(box.body);
  return {
    version,
    at: (wideOffset, narrowOffset) => ({
      box,
      offset: box.body + 4 + (version === 1 ? wideOffset : narrowOffset),
      wide: version === 1,
    }),
  };
}

function read(buf: Buffer, f: TimeField): number {
  return f.wide ? Number(buf.readBigUInt64BE(f.offset)) : buf.readUInt32BE(f.offset);
}

function write(buf: Buffer, f: TimeField, value: number): void {
  if (f.wide) buf.writeBigUInt64BE(BigInt(value), f.offset);
  else buf.writeUInt32BE(value, f.offset);
}

/** Timescale and duration fields of mvhd or mdhd (the same layout). */
function headerTimes(buf: Buffer, box: Box): { timescale: number; duration: TimeField } {
  const { version, at } = timeFields(buf, box);
  const timescale = buf.readUInt32BE(box.body + 4 + (version === 1 ? 16 : 8));
  return { timescale, duration: at(20, 12) };
}

export interface VideoFacts {
  readonly width: number;
  readonly height: number;
  /** Seconds, from the movie header. */
  readonly duration: number;
}

/** Width and height of the first track, and the movie's duration. */
export function readVideoFacts(buf: Buffer): VideoFacts {
  const mvhd = headerTimes(buf, mustFind(buf, ["moov", "mvhd"]));
  const tkhd = mustFind(buf, ["moov", "trak", "tkhd"]);
  // The last 8 bytes of tkhd: width and height, 16.16 fixed point.
  return {
    width: buf.readUInt32BE(tkhd.end - 8) / 65536,
    height: buf.readUInt32BE(tkhd.end - 4) / 65536,
    duration: read(buf, mvhd.duration) / mvhd.timescale,
  };
}

/**
 * A copy of `clip` (one video track of one frame) whose frame lasts `seconds`: the duration is
 * set in the sample table (stts) and in every header that states it; no byte of video is added.
 */
export function withDuration(clip: Buffer, seconds: number): Buffer {
  const buf = Buffer.from(clip);
  const mvhd = headerTimes(buf, mustFind(buf, ["moov", "mvhd"]));
  const mdhd = headerTimes(buf, mustFind(buf, ["moov", "trak", "mdia", "mdhd"]));
  const movieUnits = Math.round(seconds * mvhd.timescale);
  const mediaUnits = Math.round(seconds * mdhd.timescale);
  write(buf, mvhd.duration, movieUnits);
  write(buf, mdhd.duration, mediaUnits);
  const tkhd = mustFind(buf, ["moov", "trak", "tkhd"]);
  write(buf, timeFields(buf, tkhd).at(24, 16), movieUnits);
  const elst = findBox(buf, ["moov", "trak", "edts", "elst"]);
  if (elst) write(buf, timeFields(buf, elst).at(4, 4), movieUnits);
  const stts = mustFind(buf, ["moov", "trak", "mdia", "minf", "stbl", "stts"]);
  const entries = buf.readUInt32BE(stts.body + 4);
  const samples = buf.readUInt32BE(stts.body + 8);
  if (entries !== 1 || samples !== 1)
    throw new Error("not a one-frame clip: its stts has more than one sample");
  buf.writeUInt32BE(mediaUnits, stts.body + 12);
  return buf;
}
