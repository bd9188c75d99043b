// Step 3 of loading: a valid manifest "as written" -> resolved jobs. Defaults are merged field by
// field (a video's own value wins), every asset is replaced by its resolved reference, and each
// job gets its spec hash.
import type { Model } from "../service-contract/api-types.js";
import type { Position } from "./locate.js";
import type { ChunkInput, ManifestInput, VideoInput } from "./schema.js";
import { computeSpecHash } from "./spec-hash.js";
import { seedOfTake, takeId } from "./takes.js";
import type { AssetRef, Job, JobChunk, JobSpec, NormalizedManifest, RowOrigin, SpeechRef } from "./types.js";

/** Where a reference sits in the manifest, as a "/"-joined path: "videos/3/chunks/0/audio". */
export type RefKey = string;

export interface NormalizeContext {
  readonly name: string;
  readonly file: string;
  /** Every source, audio and speech of the manifest, resolved (load.ts checks them first). */
  readonly refs: ReadonlyMap<RefKey, AssetRef | SpeechRef>;
  /** Position of a video entry in the file. */
  readonly positionOfVideo: (index: number) => Position;
  /** The placeholders' values a video was expanded with (none for a video written out). */
  readonly variablesOf?: (index: number) => Readonly<Record<string, string | number | boolean>> | undefined;
  /** The CSV row a video was made from (none for a video that is not of `rows:`). */
  readonly rowOf?: (index: number) => RowOrigin | undefined;
}

function mustRef(refs: NormalizeContext["refs"], key: RefKey): AssetRef | SpeechRef {
  const ref = refs.get(key);
  if (!ref) throw new Error(`internal: unresolved reference ${key}`);
  return ref;
}

function assetRef(refs: NormalizeContext["refs"], key: RefKey): AssetRef {
  const ref = mustRef(refs, key);
  if (ref.kind === "speech") throw new Error(`internal: speech where an asset is expected at ${key}`);
  return ref;
}

function normalizeChunk(chunk: ChunkInput, at: RefKey, refs: NormalizeContext["refs"]): JobChunk {
  const out: JobChunk = { duration: chunk.duration };
  if (chunk.text !== undefined) out.text = chunk.text;
  if (chunk.audio !== undefined) out.audio = mustRef(refs, `${at}/audio`);
  else if (chunk.speech !== undefined) out.audio = mustRef(refs, `${at}/speech`);
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
  const at = `videos/${index}`;
  // The schema guarantees a model here or in defaults (and chunks: load.ts gives a video without
  // its own those of defaults).
  const model = (video.model ?? defaults.model) as Model;
  const resolution = inherit(video.resolution, defaults.resolution);
  const aspectRatio = inherit(video.aspectRatio, defaults.aspectRatio);
  const seed = inherit(video.seed, defaults.seed);
  const takes = inherit(video.takes, defaults.takes);
  const chunks = video.chunks ?? defaults.chunks ?? [];
  const sourceKey =
    video.source === null
      ? undefined
      : video.source !== undefined
        ? `${at}/source`
        : defaults.source !== undefined
          ? "defaults/source"
          : undefined;

  const specOf = (seed: number | undefined): JobSpec => ({
    model,
    ...(resolution !== undefined ? { resolution } : {}),
    ...(aspectRatio !== undefined ? { aspectRatio } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(sourceKey !== undefined ? { source: assetRef(ctx.refs, sourceKey) } : {}),
    chunks: chunks.map((c, j) => normalizeChunk(c, `${at}/chunks/${j}`, ctx.refs)),
  });

  const position = ctx.positionOfVideo(index);
  const variables = ctx.variablesOf?.(index);
  const row = ctx.rowOf?.(index);
  const job = (id: string, spec: JobSpec): Job => ({
    manifest: ctx.name,
    id,
    key: `${ctx.name}/${id}`,
    specHash: computeSpecHash(spec),
    spec,
    seconds: spec.chunks.reduce((sum, c) => sum + c.duration, 0),
    model,
    line: position.line,
    col: position.col,
    ...(variables === undefined ? {} : { variables }),
    ...(row === undefined ? {} : { row }),
  });
  if (takes === undefined) return [job(video.id, specOf(seed))];
  return Array.from({ length: takes }, (_, k) =>
    job(takeId(video.id, k + 1), specOf(seedOfTake(ctx.name, video.id, k + 1, seed))),
  );
}

export function normalizeManifest(input: ManifestInput, ctx: NormalizeContext): NormalizedManifest {
  return {
    name: ctx.name,
    file: ctx.file,
    jobs: input.videos.flatMap((v, i) => normalizeVideo(input, v, i, ctx)),
  };
}
