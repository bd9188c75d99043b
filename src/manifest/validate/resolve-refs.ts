// The media and speech of a manifest resolved (after it is validated, before it is normalized): local
// files checked (check-files.ts), ids read, and what is wrong with one said at its place.
import { readId } from "../../service-contract/check-request.js";
import type { Id } from "../../service-contract/api-types.js";
import { type FileChecker, type MediaUse } from "./check-files.js";
import type { FileContext } from "../load-context.js";
import { detached } from "../parse/detached.js";
import type { PathSegment } from "../parse/locate.js";
import { show } from "./messages.js";
import { type ChunkRefField, ResolvedRefs } from "../plan/normalize.js";
import { PROBLEM_CODES } from "../problem.js";
import { MEDIA_STRING_PATTERN } from "./schema.js";
import type { AssetRef } from "../types.js";
import { INT64_MAX, isRecord } from "../../values.js";

const MEDIA_STRING = new RegExp(MEDIA_STRING_PATTERN, "u");

/** Digits the schema accepts but the service cannot: ids are int64. */
function isOversizedId(value: unknown): boolean {
  return typeof value === "string" && /^\d+$/.test(value) && BigInt(value) > INT64_MAX;
}

/**
 * Every source, audio and speech of `raw` (found defensively), resolved; what is wrong with one is
 * said through `place`. Each distinct media path is checked once: a campaign's 100,000 videos
 * sharing a face cost one look-up, not 100,000 waits for it.
 */
export async function resolveRefs(
  raw: unknown,
  dir: string,
  checker: FileChecker,
  place: FileContext["place"],
): Promise<ResolvedRefs> {
  const refs = new ResolvedRefs();
  /** The media paths to check, by field and path: where each is used, as (video, chunk) pairs. */
  const media = new Map<string, { field: "source" | "audio"; value: string; uses: number[] }>();
  const DEFAULTS_VIDEO = -1;
  const NO_CHUNK = -1;
  const pathOf = (video: number, chunk: number, field: string): PathSegment[] =>
    video === DEFAULTS_VIDEO
      ? ["defaults", field]
      : chunk === NO_CHUNK
        ? ["videos", video, field]
        : ["videos", video, "chunks", chunk, field];
  // A campaign's voices are a few ids among many rows: each read once, one text for each.
  const voiceIds = new Map<unknown, Id | undefined>();
  const idOf = (value: unknown): Id | undefined => {
    if (typeof value !== "number" && typeof value !== "string") return readId(value);
    if (!voiceIds.has(value)) voiceIds.set(value, readId(value));
    return voiceIds.get(value);
  };
  const visit = (
    video: number,
    chunk: number,
    field: "source" | "audio" | "speech",
    value: unknown,
  ): void => {
    if (value === undefined) return;
    if (field === "speech") {
      if (!isRecord(value)) return;
      const voiceId = idOf(value.voice);
      if (isOversizedId(value.voice)) {
        place(
          [...pathOf(video, chunk, field), "voice"],
          `voice ${show(value.voice)} is larger than any id (${INT64_MAX})`,
          PROBLEM_CODES.invalidValue,
        );
      }
      if (voiceId !== undefined && typeof value.text === "string")
        refs.setChunk(video, chunk, field, { kind: "speech", voiceId, text: detached(value.text) });
      return;
    }
    if (isRecord(value)) {
      const id = readId(value.asset);
      if (id !== undefined) setRef(video, chunk, field, { kind: "asset", id });
      else if (isOversizedId(value.asset)) {
        place(
          [...pathOf(video, chunk, field), "asset"],
          `asset ${show(value.asset)} is larger than any id (${INT64_MAX})`,
          PROBLEM_CODES.invalidValue,
        );
      }
      return;
    }
    // Strings the schema refuses (empty, http://) have their problem already.
    if (typeof value !== "string" || value === "" || !MEDIA_STRING.test(value)) return;
    const key = `${field}\n${value}`;
    let entry = media.get(key);
    if (entry === undefined) {
      entry = { field, value, uses: [] };
      media.set(key, entry);
    }
    entry.uses.push(video, chunk);
  };
  const setRef = (video: number, chunk: number, field: "source" | "audio", ref: AssetRef): void => {
    if (chunk !== NO_CHUNK) refs.setChunk(video, chunk, field as ChunkRefField, ref);
    else refs.setSource(video === DEFAULTS_VIDEO ? "defaults" : video, ref);
  };

  if (isRecord(raw)) {
    if (isRecord(raw.defaults)) visit(DEFAULTS_VIDEO, NO_CHUNK, "source", raw.defaults.source);
    if (Array.isArray(raw.videos))
      raw.videos.forEach((video: unknown, i) => {
        if (!isRecord(video)) return;
        visit(i, NO_CHUNK, "source", video.source);
        if (!Array.isArray(video.chunks)) return;
        video.chunks.forEach((chunk: unknown, j) => {
          if (!isRecord(chunk)) return;
          visit(i, j, "audio", chunk.audio);
          visit(i, j, "speech", chunk.speech);
        });
      });
  }

  const entries = [...media.values()];
  const checked = await Promise.all(
    entries.map((entry) => {
      const use: MediaUse = entry.field === "source" ? "image" : "audio";
      return checker.check(entry.value, dir, entry.field, use);
    }),
  );
  entries.forEach((entry, k) => {
    const result = checked[k]!;
    for (let u = 0; u < entry.uses.length; u += 2) {
      const video = entry.uses[u]!;
      const chunk = entry.uses[u + 1]!;
      if (result.ok) setRef(video, chunk, entry.field, result.ref);
      else place(pathOf(video, chunk, entry.field), result.message, result.code, "value", result.file);
    }
  });
  return refs;
}
