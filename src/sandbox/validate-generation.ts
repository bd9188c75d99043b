// Turns an accepted POST /v1/generations body into what the lifecycle needs. The checks
// themselves live in service-contract/check-request.ts, shared with the manifest validator; this module
// only fills the defaults the spec leaves open and collects the asset ids to verify later.
import type { AspectRatio, Id, Model, Resolution } from "../service-contract/api-types.js";
import { checkGenerationRequest, readId, type Violation } from "../service-contract/check-request.js";
import { MODEL_RULES, SANDBOX_DEFAULTS } from "../service-contract/model-rules.js";

export interface GenerationPlan {
  readonly model: Model;
  readonly resolution: Resolution;
  readonly aspectRatio: AspectRatio;
  readonly sourceAssetId: Id | undefined;
  readonly audioAssetIds: readonly Id[];
  /** Seconds of video over all chunks: the run time and the price. */
  readonly seconds: number;
}

export type PlanResult =
  | { readonly ok: true; readonly plan: GenerationPlan }
  | { readonly ok: false; readonly violations: readonly Violation[] };

interface CheckedCondition {
  readonly type: "text" | "audio";
  readonly content: unknown;
}

interface CheckedChunk {
  readonly duration: unknown;
  readonly conditions: readonly CheckedCondition[];
}

/** The body once checkGenerationRequest found nothing wrong: these shapes are guaranteed. */
interface CheckedBody {
  readonly model?: Model | null;
  readonly resolution?: Resolution | null;
  readonly aspectRatio?: AspectRatio | null;
  readonly source?: { readonly content: unknown } | null;
  readonly chunks: readonly CheckedChunk[];
}

export function planGeneration(body: unknown): PlanResult {
  const violations = checkGenerationRequest(body);
  if (violations.length > 0) return { ok: false, violations };
  const checked = body as CheckedBody;
  const model = checked.model ?? SANDBOX_DEFAULTS.model;
  const rules = MODEL_RULES[model];
  const audioAssetIds: Id[] = [];
  let seconds = 0;
  for (const chunk of checked.chunks) {
    seconds += Number(String(chunk.duration));
    for (const condition of chunk.conditions) {
      const id = condition.type === "audio" ? readId(condition.content) : undefined;
      if (id !== undefined) audioAssetIds.push(id);
    }
  }
  const source = checked.source;
  return {
    ok: true,
    plan: {
      model,
      // The first resolution the model takes: the spec shows no default, and any other choice
      // would make a request without a resolution invalid for some model.
      resolution: checked.resolution ?? (rules.resolutions[0] as Resolution),
      aspectRatio: checked.aspectRatio ?? SANDBOX_DEFAULTS.aspectRatio,
      sourceAssetId: source ? readId(source.content) : undefined,
      audioAssetIds,
      seconds,
    },
  };
}
