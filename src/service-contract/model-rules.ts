// The per-model rules of docs/service-api.md, defined once. The manifest schema is generated
// from this table and the sandbox enforces it, so the validator and the emulator cannot drift.
import type { AspectRatio, Model, Resolution } from "./api-types.js";

export type Need = "required" | "optional";

export interface ModelRules {
  readonly family: "actor" | "avatar";
  readonly resolutions: readonly Resolution[];
  readonly aspectRatios: readonly AspectRatio[];
  /** Either an explicit list of allowed chunk durations, or an upper bound (seconds, integer >= 1). */
  readonly durations: { readonly oneOf: readonly number[] } | { readonly max: number };
  /** A text condition in every chunk. */
  readonly text: Need;
  /** An audio condition in every chunk. */
  readonly audio: Need;
  /** A source image. */
  readonly source: Need;
}

// A model family's rules, shared: actor-1 and actor-2 take the same, as do avatar-h1 and
// avatar-h1-pro; actor-4 is an actor model at 540p only.
const ACTOR: ModelRules = {
  family: "actor",
  resolutions: ["720p", "1080p"],
  aspectRatios: ["16:9", "9:16"],
  durations: { oneOf: [5, 10] },
  text: "required",
  audio: "optional",
  source: "optional",
};

const AVATAR: ModelRules = {
  family: "avatar",
  resolutions: ["540p", "720p"],
  aspectRatios: ["16:9", "9:16", "1:1"],
  durations: { max: 60 },
  text: "optional",
  audio: "required",
  source: "required",
};

export const MODEL_RULES: Readonly<Record<Model, ModelRules>> = {
  "actor-1": ACTOR,
  "actor-2": ACTOR,
  "actor-4": { ...ACTOR, resolutions: ["540p"] },
  "avatar-h1": AVATAR,
  "avatar-h1-pro": AVATAR,
};

/**
 * What the emulator assumes when a request leaves a field out. The real defaults are "not shown"
 * in the spec, which is why reel's manifests always name the model explicitly.
 */
export const SANDBOX_DEFAULTS = { model: "actor-2", aspectRatio: "16:9" } as const satisfies {
  model: Model;
  aspectRatio: AspectRatio;
};

export function describeDurations(rules: ModelRules): string {
  return "oneOf" in rules.durations
    ? `${rules.durations.oneOf.join(" or ")} seconds`
    : `1 to ${rules.durations.max} seconds`;
}

export function isDurationAllowed(rules: ModelRules, duration: number): boolean {
  if (!Number.isInteger(duration) || duration < 1) return false;
  return "oneOf" in rules.durations
    ? rules.durations.oneOf.includes(duration)
    : duration <= rules.durations.max;
}
