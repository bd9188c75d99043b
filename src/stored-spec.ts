// The one reader of a job's stored spec (the request it sends, as the store keeps it in spec_json):
// the fields reel reads back, typed. Read defensively: a row written by an earlier reel may lack a
// field, and a spec that cannot be read at all reads as one without any.
import { isRecord } from "./values.js";

/** A line of speech a chunk asks for: what its speech call is made of. */
export interface StoredSpeech {
  readonly voiceId: string;
  readonly text: string;
}

export interface StoredSpec {
  /** The spec as stored, parsed (empty when it cannot be read): what a job's record shows. */
  readonly sent: Readonly<Record<string, unknown>>;
  readonly seed: number | undefined;
  readonly resolution: string | undefined;
  readonly aspectRatio: string | undefined;
  /** The source image or video's reference, as sent (an asset id, or a local path before upload). */
  readonly source: unknown;
  /** The chunks, as sent. */
  readonly chunks: readonly unknown[];
  /** The speech the chunks ask for, in their order. */
  readonly speech: readonly StoredSpeech[];
  /** The texts generated as speech, in the order of the chunks. */
  readonly spoken: readonly string[];
}

export function readStoredSpec(specJson: string): StoredSpec {
  let parsed: unknown;
  try {
    parsed = JSON.parse(specJson);
  } catch {
    parsed = {};
  }
  const s = isRecord(parsed) ? parsed : {};
  const chunks = Array.isArray(s.chunks) ? (s.chunks as unknown[]) : [];
  const speech: StoredSpeech[] = [];
  for (const chunk of chunks) {
    const audio = isRecord(chunk) ? chunk.audio : undefined;
    if (isRecord(audio) && audio.kind === "speech" && typeof audio.text === "string") {
      speech.push({ voiceId: typeof audio.voiceId === "string" ? audio.voiceId : "", text: audio.text });
    }
  }
  return {
    sent: s,
    seed: typeof s.seed === "number" ? s.seed : undefined,
    resolution: typeof s.resolution === "string" ? s.resolution : undefined,
    aspectRatio: typeof s.aspectRatio === "string" ? s.aspectRatio : undefined,
    source: s.source,
    chunks,
    speech,
    spoken: speech.map((line) => line.text),
  };
}
