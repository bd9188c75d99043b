// JobSpec -> the JSON body of POST /v1/generations (docs/service-api.md), once every asset has an id.
import type { Chunk, Condition, GenerationRequest, Id } from "../../service-contract/api-types.js";
import type { AssetRef, JobSpec, SpeechRef } from "../types.js";

/**
 * Builds the wire body. `resolve` gives the asset id of each reference (uploaded file, downloaded
 * and uploaded URL, given asset, generated speech); the engine owns how. Text comes before audio
 * in a chunk's conditions; optional fields that the manifest left out are left out here too.
 */
export function toGenerationRequest(
  spec: JobSpec,
  resolve: (ref: AssetRef | SpeechRef) => Id,
): GenerationRequest {
  const chunks: Chunk[] = spec.chunks.map((c) => {
    const conditions: Condition[] = [];
    if (c.text !== undefined) conditions.push({ type: "text", content: c.text });
    if (c.audio !== undefined) conditions.push({ type: "audio", content: resolve(c.audio) });
    const chunk: Chunk = { duration: c.duration, conditions };
    if (c.enablePromptEnhancement !== undefined) chunk.enablePromptEnhancement = c.enablePromptEnhancement;
    return chunk;
  });
  const body: GenerationRequest = {
    model: spec.model,
    ...(spec.resolution !== undefined ? { resolution: spec.resolution } : {}),
    ...(spec.aspectRatio !== undefined ? { aspectRatio: spec.aspectRatio } : {}),
    ...(spec.seed !== undefined ? { seed: spec.seed } : {}),
    ...(spec.source !== undefined
      ? { source: { type: "image" as const, content: resolve(spec.source) } }
      : {}),
    chunks,
  };
  return body;
}
