// The upload formats of docs/service-api.md, in one table: what kind of media each is, how it is
// served, named on disk and named in messages. The manifest validator, the engine (fetched sources)
// and the sandbox all read it, so a format added or renamed here changes every one of them.
// A file's format is recognised by its first bytes, never by its name: a PNG renamed `.mp3` is an image.

export type MediaKind = "image" | "video" | "audio";
export type MediaFormat = "jpeg" | "png" | "gif" | "webp" | "mp4" | "mp3" | "wav" | "ogg";

export interface MediaFormatFacts {
  readonly kind: MediaKind;
  /** The Content-Type the file is served with. */
  readonly contentType: string;
  /** The file name extension, without the dot. */
  readonly extension: string;
  /** How the format is named in lists: "JPEG", "WebP". */
  readonly name: string;
  /** How one file of it is named in a sentence: "a JPEG image", "an MP3 audio file". */
  readonly words: string;
}

export const MEDIA_FORMATS: Readonly<Record<MediaFormat, MediaFormatFacts>> = {
  jpeg: { kind: "image", contentType: "image/jpeg", extension: "jpg", name: "JPEG", words: "a JPEG image" },
  png: { kind: "image", contentType: "image/png", extension: "png", name: "PNG", words: "a PNG image" },
  gif: { kind: "image", contentType: "image/gif", extension: "gif", name: "GIF", words: "a GIF image" },
  webp: { kind: "image", contentType: "image/webp", extension: "webp", name: "WebP", words: "a WebP image" },
  mp4: { kind: "video", contentType: "video/mp4", extension: "mp4", name: "MP4", words: "an MP4 video" },
  mp3: {
    kind: "audio",
    contentType: "audio/mpeg",
    extension: "mp3",
    name: "MP3",
    words: "an MP3 audio file",
  },
  wav: { kind: "audio", contentType: "audio/wav", extension: "wav", name: "WAV", words: "a WAV audio file" },
  ogg: { kind: "audio", contentType: "audio/ogg", extension: "ogg", name: "OGG", words: "an OGG audio file" },
};

interface MediaKindWords {
  /** One of it in a sentence: "is an image", "is audio". */
  readonly one: string;
  /** One file of it, as a field expects it: "an audio file". */
  readonly file: string;
  /** Many of it in a list: "images". */
  readonly many: string;
}

const KIND_WORDS: Readonly<Record<MediaKind, MediaKindWords>> = {
  image: { one: "an image", file: "an image", many: "images" },
  video: { one: "a video", file: "a video", many: "video" },
  audio: { one: "audio", file: "an audio file", many: "audio" },
};

const FORMATS = Object.keys(MEDIA_FORMATS) as MediaFormat[];

export function kindOf(format: MediaFormat): MediaKind {
  return MEDIA_FORMATS[format].kind;
}

/** "JPEG, PNG, GIF, WebP": the names of the formats of `kind`. */
export function formatNames(kind: MediaKind): string {
  return FORMATS.filter((f) => kindOf(f) === kind)
    .map((f) => MEDIA_FORMATS[f].name)
    .join(", ");
}

/** "an image", "a video", "audio". */
export function kindWords(kind: MediaKind): string {
  return KIND_WORDS[kind].one;
}

/** What a field of `kind` expects, formats named: "an audio file (MP3, WAV, OGG)". */
export function expectedWords(kind: MediaKind): string {
  return `${KIND_WORDS[kind].file} (${formatNames(kind)})`;
}

/** "JPEG, PNG, GIF, WebP images; MP4 video; MP3, WAV, OGG audio". */
export const ACCEPTED_FORMATS_TEXT = (Object.keys(KIND_WORDS) as MediaKind[])
  .map((kind) => `${formatNames(kind)} ${KIND_WORDS[kind].many}`)
  .join("; ");

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
