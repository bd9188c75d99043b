// Wire types of the service (docs/service-api.md). Every int64 id travels as a
// decimal string inside reel: JavaScript numbers lose precision above 2^53, and the spec
// accepts numeric strings wherever an asset id is sent.

/** An int64 identifier as a decimal string, e.g. "1800000000000000001". */
export type Id = string;

export const MODELS = ["actor-1", "actor-2", "actor-4", "avatar-h1", "avatar-h1-pro"] as const;
export type Model = (typeof MODELS)[number];

export const RESOLUTIONS = ["540p", "720p", "1080p"] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

export const ASPECT_RATIOS = ["16:9", "9:16", "1:1"] as const;
export type AspectRatio = (typeof ASPECT_RATIOS)[number];

export const TASK_STATUSES = ["PreProcessing", "Pending", "Running", "Success", "Fail", "Canceled"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
/** Statuses after which a task never changes again. The spec only says "stop at least on Success and Fail". */
export const FINAL_STATUSES: ReadonlySet<TaskStatus> = new Set(["Success", "Fail", "Canceled"]);

export interface Condition {
  type: "text" | "audio";
  /** The text, or the audio asset id. */
  content: string;
}

export interface Chunk {
  duration: number;
  conditions: Condition[];
  enablePromptEnhancement?: boolean;
}

export interface GenerationRequest {
  model?: Model;
  aspectRatio?: AspectRatio;
  resolution?: Resolution;
  source?: { type: "image"; content: Id };
  chunks: Chunk[];
  seed?: number;
}

export interface GenerationTask {
  id: Id;
  status: TaskStatus;
  resultVideoURL?: string;
  resultVideoId?: Id;
  createTime: string;
  /** Why a task failed. The spec says reasons are "reported in the response" without naming the field. */
  failReason?: string;
}

export interface Asset {
  id: Id;
  url: string;
}

export interface SpeechRequest {
  voiceId: Id;
  text: string;
}

export interface GeneratedAudio {
  id: Id;
  duration: number;
  url: string;
}
