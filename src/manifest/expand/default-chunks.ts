// `defaults.chunks`: the chunks of every video that gives none. Copied into such a video
// before its matrix is expanded and the manifest validated, so that each video's chunks are checked
// against its own model, and a matrix's placeholders reach them. A problem found in them is placed at
// the defaults' line, with the video named (matrix-places.ts).
import { isRecord } from "../../values.js";

export interface ChunkInheritance {
  /** The manifest with defaults' chunks in every video without its own; `raw` itself if none. */
  readonly value: unknown;
  /** The videos (by index as written) that took defaults' chunks. */
  readonly inherited: ReadonlySet<number>;
}

export function inheritChunks(raw: unknown): ChunkInheritance {
  const inherited = new Set<number>();
  if (!isRecord(raw) || !isRecord(raw.defaults) || !("chunks" in raw.defaults) || !Array.isArray(raw.videos))
    return { value: raw, inherited };
  const { chunks, ...rest } = raw.defaults;
  const videos = raw.videos.map((video: unknown, index) => {
    if (!isRecord(video) || "chunks" in video) return video;
    inherited.add(index);
    return { ...video, chunks };
  });
  // Checked in each video that takes them, against its model (and after its matrix filled their
  // placeholders): not on their own as well. Kept when no video takes them, so they are checked.
  return { value: { ...raw, defaults: inherited.size > 0 ? rest : raw.defaults, videos }, inherited };
}
