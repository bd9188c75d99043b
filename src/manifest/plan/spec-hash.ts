// The identity of what a job sends. Two specs hash the same exactly when the service would receive
// the same request: local files count by content (a renamed or moved file is the same asset),
// remote files by URL, uploaded assets by id, speech by voice and text. Comments, key order and
// defaults-vs-explicit in the manifest cannot change it because the hash is taken of the
// normalized spec, as canonical JSON (sorted keys, no undefined).
import { hash } from "node:crypto";
import type { AssetRef, JobChunk, JobSpec, SpeechRef } from "../types.js";

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

/** A spec's fields, and a chunk's, in canonical (sorted) order: the hash reads them in this order. */
const SPEC_KEYS = ["aspectRatio", "chunks", "model", "resolution", "seed", "source"] as const;
const CHUNK_KEYS = ["audio", "duration", "enablePromptEnhancement", "text"] as const;
const SPEC_FIELDS = new Set<string>(SPEC_KEYS);
const CHUNK_FIELDS = new Set<string>(CHUNK_KEYS);

/** The canonical JSON of each shared reference's identity (a campaign's one face): made once. */
const identityJson = new WeakMap<AssetRef | SpeechRef, string>();

function refJson(ref: AssetRef | SpeechRef): string {
  // Speech is one per text, a campaign's one per row: written out (its keys in sorted order), not kept.
  if (ref.kind === "speech")
    return `{"kind":"speech","text":${JSON.stringify(ref.text)},"voiceId":${JSON.stringify(ref.voiceId)}}`;
  let json = identityJson.get(ref);
  if (json === undefined) {
    json = canonicalJson(refIdentity(ref));
    identityJson.set(ref, json);
  }
  return json;
}

/**
 * canonicalJson of the spec with its references replaced by their identities, written field by field:
 * the same text, without sorting the keys of every object of 100,000 jobs. Undefined when the spec
 * has a field this does not know (then the general form is used).
 */
function specJson(spec: JobSpec): string | undefined {
  for (const key in spec) if (!SPEC_FIELDS.has(key)) return undefined;
  let out = "{";
  for (const key of SPEC_KEYS) {
    const value = spec[key];
    if (value === undefined) continue;
    let json: string;
    if (key === "source") json = refJson(value as AssetRef);
    else if (key === "chunks") {
      json = "[";
      const chunks = value as JobChunk[];
      for (let i = 0; i < chunks.length; i++) {
        const chunk = chunks[i];
        if (chunk === undefined || chunk === null || typeof chunk !== "object") return undefined;
        for (const field in chunk) if (!CHUNK_FIELDS.has(field)) return undefined;
        let item = "{";
        for (const field of CHUNK_KEYS) {
          const v = chunk[field];
          if (v === undefined) continue;
          const part = field === "audio" ? refJson(v as AssetRef | SpeechRef) : canonicalJson(v);
          item += `${item.length > 1 ? "," : ""}"${field}":${part}`;
        }
        json += `${i > 0 ? "," : ""}${item}}`;
      }
      json += "]";
    } else json = canonicalJson(value);
    out += `${out.length > 1 ? "," : ""}"${key}":${json}`;
  }
  return `${out}}`;
}

export function computeSpecHash(spec: JobSpec): string {
  let json = specJson(spec);
  if (json === undefined) {
    const hashable = {
      ...spec,
      source: spec.source && refIdentity(spec.source),
      chunks: spec.chunks.map((c) => ({ ...c, audio: c.audio && refIdentity(c.audio) })),
    };
    json = canonicalJson(hashable);
  }
  // One call rather than a Hash object per job.
  return hash("sha256", `${SPEC_HASH_VERSION}\n${json}`, "hex");
}
