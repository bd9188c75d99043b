// What a delivery needs of the request a job sent (its spec, as the store keeps it): the seed, the
// format and the texts spoken. Read defensively: a row written by an earlier reel may lack a field.
import { isRecord } from "./values.js";

export interface SpecFields {
  readonly seed: number | undefined;
  readonly resolution: string | undefined;
  readonly aspectRatio: string | undefined;
  /** The texts generated as speech, in the order of the chunks. */
  readonly spoken: readonly string[];
}

export function specOf(specJson: string): SpecFields {
  let spec: unknown;
  try {
    spec = JSON.parse(specJson);
  } catch {
    spec = {};
  }
  const s = isRecord(spec) ? spec : {};
  const chunks = Array.isArray(s.chunks) ? s.chunks : [];
  const spoken: string[] = [];
  for (const chunk of chunks) {
    const audio = isRecord(chunk) ? chunk.audio : undefined;
    if (isRecord(audio) && audio.kind === "speech" && typeof audio.text === "string") spoken.push(audio.text);
  }
  return {
    seed: typeof s.seed === "number" ? s.seed : undefined,
    resolution: typeof s.resolution === "string" ? s.resolution : undefined,
    aspectRatio: typeof s.aspectRatio === "string" ? s.aspectRatio : undefined,
    spoken,
  };
}
