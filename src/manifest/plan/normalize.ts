// Step 3 of loading: a valid manifest "as written" -> resolved jobs. Defaults are merged field by
// field (a video's own value wins), every asset is replaced by its resolved reference, and each
// job gets its spec hash.
import type { Model } from "../../service-contract/api-types.js";
import type { Position } from "../parse/locate.js";
import type { ChunkInput, ManifestInput, VideoInput } from "../validate/schema.js";
import { detached } from "../parse/detached.js";
import { computeSpecHash } from "./spec-hash.js";
import { seedOfTake, takeId } from "../expand/takes.js";
import type { AssetRef, Job, JobChunk, JobSpec, NormalizedManifest, RowOrigin, SpeechRef } from "../types.js";

/** Which reference of a chunk: its audio file or its speech. */
export type ChunkRefField = "audio" | "speech";

/**
 * Every source, audio and speech of a manifest, resolved, by where it is written (load.ts checks
 * them first). Indexed by number rather than by a path text: a campaign has hundreds of thousands.
 */
export class ResolvedRefs {
  private defaultsSource: AssetRef | undefined;
  private readonly sources: (AssetRef | undefined)[] = [];
  /** By video, then 2 * chunk (audio) or 2 * chunk + 1 (speech). */
  private readonly chunks: ((AssetRef | SpeechRef)[] | undefined)[] = [];

  setSource(video: number | "defaults", ref: AssetRef): void {
    if (video === "defaults") this.defaultsSource = ref;
    else this.sources[video] = ref;
  }

  setChunk(video: number, chunk: number, field: ChunkRefField, ref: AssetRef | SpeechRef): void {
    const refs = (this.chunks[video] ??= []);
    refs[2 * chunk + (field === "speech" ? 1 : 0)] = ref;
  }

  source(video: number | "defaults"): AssetRef {
    const ref = video === "defaults" ? this.defaultsSource : this.sources[video];
    if (!ref)
      throw new Error(
        `internal: unresolved reference ${video === "defaults" ? "defaults" : `videos/${video}`}/source`,
      );
    return ref;
  }

  chunk(video: number, chunk: number, field: ChunkRefField): AssetRef | SpeechRef {
    const ref = this.chunks[video]?.[2 * chunk + (field === "speech" ? 1 : 0)];
    if (!ref) throw new Error(`internal: unresolved reference videos/${video}/chunks/${chunk}/${field}`);
    return ref;
  }
}

export interface NormalizeContext {
  readonly name: string;
  readonly file: string;
  /** Every source, audio and speech of the manifest, resolved. */
  readonly refs: ResolvedRefs;
  /** Position of a video entry in the file. */
  readonly positionOfVideo: (index: number) => Position;
  /** The placeholders' values a video was expanded with (none for a video written out). */
  readonly variablesOf?: (index: number) => Readonly<Record<string, string | number | boolean>> | undefined;
  /** The CSV row a video was made from (none for a video that is not of `rows:`). */
  readonly rowOf?: (index: number) => RowOrigin | undefined;
}

function normalizeChunk(chunk: ChunkInput, video: number, index: number, refs: ResolvedRefs): JobChunk {
  // Built from an empty object: one with room for four fields in itself (a literal of one field
  // grows a separate array of fields for the second, 40 bytes a chunk).
  const out = {} as JobChunk;
  out.duration = chunk.duration;
  if (chunk.text !== undefined) out.text = detached(chunk.text);
  if (chunk.audio !== undefined) out.audio = refs.chunk(video, index, "audio");
  else if (chunk.speech !== undefined) out.audio = refs.chunk(video, index, "speech");
  if (chunk.enablePromptEnhancement !== undefined)
    out.enablePromptEnhancement = chunk.enablePromptEnhancement;
  return out;
}

/** A video's own value, else the default; a video's null clears the default. */
export function inherit<T>(own: T | null | undefined, given: T | undefined): T | undefined {
  return own === null ? undefined : own !== undefined ? own : given;
}

function normalizeVideo(
  input: ManifestInput,
  video: VideoInput,
  index: number,
  ctx: NormalizeContext,
): Job[] {
  const defaults = input.defaults ?? {};
  // The schema guarantees a model here or in defaults (and chunks: load.ts gives a video without
  // its own those of defaults).
  const model = (video.model ?? defaults.model) as Model;
  const resolution = inherit(video.resolution, defaults.resolution);
  const aspectRatio = inherit(video.aspectRatio, defaults.aspectRatio);
  const seed = inherit(video.seed, defaults.seed);
  const takes = inherit(video.takes, defaults.takes);
  const chunks = video.chunks ?? defaults.chunks ?? [];
  const sourceOf: number | "defaults" | undefined =
    video.source === null
      ? undefined
      : video.source !== undefined
        ? index
        : defaults.source !== undefined
          ? "defaults"
          : undefined;

  // Built field by field in the order JSON of a spec has always had (the state keeps that JSON).
  const specOf = (seed: number | undefined): JobSpec => {
    const spec = {} as JobSpec; // room for four fields in itself, as a chunk (normalizeChunk)
    spec.model = model;
    if (resolution !== undefined) spec.resolution = resolution;
    if (aspectRatio !== undefined) spec.aspectRatio = aspectRatio;
    if (seed !== undefined) spec.seed = seed;
    if (sourceOf !== undefined) spec.source = ctx.refs.source(sourceOf);
    spec.chunks = chunks.map((c, j) => normalizeChunk(c, index, j, ctx.refs));
    return spec;
  };

  const position = ctx.positionOfVideo(index);
  const variables = ctx.variablesOf?.(index);
  const row = ctx.rowOf?.(index);
  const job = (written: string, spec: JobSpec): Job => {
    const id = detached(written);
    const made: Job = {
      manifest: ctx.name,
      id,
      // One string rather than a pair of joins pointing at their parts (32 bytes each).
      key: detached(`${ctx.name}/${id}`),
      specHash: computeSpecHash(spec),
      spec,
      seconds: spec.chunks.reduce((sum, c) => sum + c.duration, 0),
      model,
      line: position.line,
      col: position.col,
    };
    if (variables !== undefined) made.variables = variables;
    if (row !== undefined) made.row = row;
    return made;
  };
  if (takes === undefined) return [job(video.id, specOf(seed))];
  return Array.from({ length: takes }, (_, k) =>
    job(takeId(video.id, k + 1), specOf(seedOfTake(ctx.name, video.id, k + 1, seed))),
  );
}

/**
 * The manifest's jobs. Takes the videos out of `input` as their jobs are made, so the parsed manifest
 * and its jobs are not both alive whole (100,000 videos: some 45 MB each, the peak of a run's start).
 */
export function normalizeManifest(input: ManifestInput, given: NormalizeContext): NormalizedManifest {
  const ctx = { ...given, name: detached(given.name) };
  const jobs: Job[] = [];
  const videos: (VideoInput | undefined)[] = input.videos;
  for (let i = 0; i < videos.length; i++) {
    for (const job of normalizeVideo(input, videos[i]!, i, ctx)) jobs.push(job);
    videos[i] = undefined;
  }
  return { name: ctx.name, file: ctx.file, jobs };
}
