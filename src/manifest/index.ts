// The manifest part of reel: load (parse -> validate -> normalize) and plan. Everything other
// parts use is exported here.
export { FileChecker, hashFileStreaming } from "./validate/check-files.js";
export { type FormatOptions, formatProblems, mergeFindings, problemLocation } from "./format-problems.js";
export { globToRegExp, makeJobFilter, onlyHint } from "./job-filter.js";
export { checkAllowRead, DEFAULT_MAX_FILE_BYTES, loadManifests } from "./load.js";
export { isManifestFile, nameFromFileName, PROJECT_FILE_NAME } from "./parse/manifest-file.js";
export {
  type EarlierVersion,
  type ExplainView,
  type JobStatus,
  makePlan,
  type Plan,
  type PlanModelLine,
  type PlanSpeech,
  type PlanStateView,
  type PlanUpload,
} from "./plan/plan.js";
export {
  PROBLEM_CODES,
  type Problem,
  type ProblemCode,
  type Warning,
  WARNING_CODES,
  type WarningCode,
} from "./problem.js";
export { toGenerationRequest } from "./plan/request.js";
export {
  diffSpecs,
  type Explained,
  explainNew,
  explainPlan,
  type Reason,
  type ReasonCode,
  summarizeReasons,
} from "./plan/explain.js";
export {
  buildManifestSchema,
  type ChunkInput,
  type DefaultsInput,
  type ManifestInput,
  manifestSchemaText,
  type VideoInput,
} from "./validate/schema.js";
export { canonicalJson, computeSpecHash, refIdentity } from "./plan/spec-hash.js";
export type {
  AssetRef,
  Job,
  JobChunk,
  JobSpec,
  LoadOptions,
  LoadResult,
  NormalizedManifest,
  SpeechRef,
} from "./types.js";
