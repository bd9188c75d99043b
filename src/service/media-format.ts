// Recognise the upload formats of api-spec.md section 2.2 by their first bytes, never by the file
// name: a PNG renamed `.mp3` is an image. Shared by the manifest validator and the sandbox.

export type MediaKind = "image" | "video" | "audio";
export type MediaFormat = "jpeg" | "png" | "gif" | "webp" | "mp4" | "mp3" | "wav" | "ogg";

export const MEDIA_KIND: Readonly<Record<MediaFormat, MediaKind>> = {
  jpeg: "image",
  png: "image",
  gif: "image",
  webp: "image",
  mp4: "video",
  mp3: "audio",
  wav: "audio",
  ogg: "audio",
};

/** How many leading bytes `sniffFormat` needs to decide. */
export const SNIFF_BYTES = 16;

function ascii(bytes: Uint8Array, at: number, text: string): boolean {
  if (bytes.length < at + text.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[at + i] !== text.charCodeAt(i)) return false;
  return true;
}

export function sniffFormat(bytes: Uint8Array): MediaFormat | undefined {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "jpeg";
  if (ascii(bytes, 0, "\x89PNG\r\n\x1a\n")) return "png";
  if (ascii(bytes, 0, "GIF87a") || ascii(bytes, 0, "GIF89a")) return "gif";
  if (ascii(bytes, 0, "RIFF") && ascii(bytes, 8, "WEBP")) return "webp";
  if (ascii(bytes, 0, "RIFF") && ascii(bytes, 8, "WAVE")) return "wav";
  if (ascii(bytes, 4, "ftyp")) return "mp4";
  if (ascii(bytes, 0, "OggS")) return "ogg";
  if (ascii(bytes, 0, "ID3")) return "mp3";
  // An MP3 without ID3 tag starts with a frame sync: 11 set bits, MPEG version not "reserved",
  // layer III.
  const b0 = bytes[0];
  const b1 = bytes[1];
  if (b0 === 0xff && b1 !== undefined && (b1 & 0xe0) === 0xe0 && (b1 & 0x18) !== 0x08 && (b1 & 0x06) === 0x02)
    return "mp3";
  return undefined;
}

export const ACCEPTED_FORMATS_TEXT = "JPEG, PNG, GIF, WebP images; MP4 video; MP3, WAV, OGG audio";
