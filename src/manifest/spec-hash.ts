// The identity of what a job sends. Two specs hash the same exactly when the service would receive
// the same request: local files count by content (a renamed or moved file is the same asset),
// remote files by URL, uploaded assets by id, speech by voice and text. Comments, key order and
// defaults-vs-explicit in the manifest cannot change it because the hash is taken of the
// normalized spec, as canonical JSON (sorted keys, no undefined).
import { createHash } from "node:crypto";
import type { AssetRef, JobSpec, SpeechRef } from "./types.js";

/** Bumped if the meaning of a spec changes, so old hashes can never match new specs by accident. */
const SPEC_HASH_VERSION = "reel-spec/1";

/** JSON with object keys sorted at every level and undefined fields left out. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      out += `${i > 0 ? "," : ""}${item === undefined ? "null" : canonicalJson(item)}`;
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  let out = "{";
  for (const key of keys) {
    const item = record[key];
    if (item === undefined) continue;
    out += `${out.length > 1 ? "," : ""}${JSON.stringify(key)}:${canonicalJson(item)}`;
  }
  return `${out}}`;
}

/** What of a reference reaches the service: the content for files, not where they lie. */
export function refIdentity(ref: AssetRef | SpeechRef): Record<string, string> {
  switch (ref.kind) {
    case "file":
      return { kind: "file", sha256: ref.sha256 };
    case "url":
      return { kind: "url", url: ref.url };
    case "asset":
      return { kind: "asset", id: ref.id };
    case "speech":
      return { kind: "speech", voiceId: ref.voiceId, text: ref.text };
  }
}

export function computeSpecHash(spec: JobSpec): string {
  const hashable = {
    ...spec,
    source: spec.source && refIdentity(spec.source),
    chunks: spec.chunks.map((c) => ({ ...c, audio: c.audio && refIdentity(c.audio) })),
  };
  return createHash("sha256")
    .update(`${SPEC_HASH_VERSION}\n${canonicalJson(hashable)}`)
    .digest("hex");
}
