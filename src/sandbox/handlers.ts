// One function per endpoint of docs/service-api.md. Each computes a Reply and never writes to
// the socket itself, so the server can still swap a success for an injected 500 or a dropped
// connection after the effect has happened.

import { rename } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import { join } from "node:path";
import type { Id } from "../service-contract/api-types.js";
import { readId, type Violation } from "../service-contract/check-request.js";
import { MEDIA_FORMATS, type MediaFormat } from "../service-contract/media-format.js";
import type { AssetStore } from "./assets.js";
import type { SandboxCounters } from "./counters.js";
import type { CreditLedger } from "./credits.js";
import type { Generations, TaskRecord } from "./generations.js";
import {
  canonicalJson,
  detailReply,
  jsonId,
  jsonReply,
  noted,
  type Reply,
  readJsonBody,
  validationReply,
} from "./json-io.js";
import type { SandboxPersistence } from "./persistence.js";
import type { ApiRoute } from "./routes.js";
import { writeSpeech } from "./speech.js";
import { receiveUpload } from "./upload.js";
import { planGeneration } from "./validate-generation.js";
import { INT64_MAX } from "../values.js";

/** Longest speech text accepted. The spec shows no limit; this keeps a WAV under ~30 MB. */
export const MAX_SPEECH_CHARS = 5000;

export interface HandlerDeps {
  readonly counters: SandboxCounters;
  readonly credits: CreditLedger;
  readonly generations: Generations;
  readonly assets: AssetStore;
  readonly nextId: () => Id;
  readonly persistence: SandboxPersistence;
  /** Where accepted uploads and speech live. */
  readonly assetDir: string;
  /** Where uploads stream to before they are judged. */
  readonly tmpDir: string;
}

type Handler = (req: IncomingMessage, param: string, deps: HandlerDeps) => Promise<Reply>;

const INT64_MIN = -(2n ** 63n);

/** A path id as FastAPI parses an `int` path parameter: any int64 is valid, the rest is 422. */
function parsePathId(param: string): { readonly id: Id } | { readonly reply: Reply } {
  if (/^[+-]?\d{1,20}$/.test(param)) {
    const value = BigInt(param);
    if (value >= INT64_MIN && value <= INT64_MAX) return { id: value.toString() };
  }
  return {
    reply: validationReply("path", [
      {
        loc: ["id"],
        msg: "Input should be a valid integer, unable to parse string as an integer",
        type: "int_parsing",
      },
    ]),
  };
}

function taskBody(task: TaskRecord, assets: AssetStore): Record<string, unknown> {
  const resultVideoURL = task.resultVideoId === undefined ? undefined : assets.urlOf(task.resultVideoId);
  return {
    id: jsonId(task.id),
    status: task.status,
    createTime: new Date(task.createdAt).toISOString(),
    ...(resultVideoURL !== undefined ? { resultVideoURL } : {}),
    ...(task.resultVideoId !== undefined ? { resultVideoId: jsonId(task.resultVideoId) } : {}),
    ...(task.failReason !== undefined ? { failReason: task.failReason } : {}),
  };
}

const createGeneration: Handler = async (req, _param, deps) => {
  const body = await readJsonBody(req);
  if (!body.ok) return body.reply;
  const planned = planGeneration(body.value);
  if (!planned.ok) return validationReply("body", planned.violations);
  const cost = planned.plan.seconds;
  // One transaction for the charge and the task: a kill -9 between them must not keep the credits.
  const outcome = deps.persistence.atomically((): TaskRecord | string => {
    const refusal = deps.credits.charge(cost, `this generation (${cost} s of video)`);
    return refusal ?? deps.generations.create(planned.plan, canonicalJson(body.value), cost);
  });
  if (typeof outcome === "string") return noted(detailReply(402, outcome), "no credits left");
  return noted(jsonReply(200, { id: jsonId(outcome.id) }), `task ${outcome.id}, ${cost} s of video`);
};

const getGeneration: Handler = async (_req, param, deps) => {
  const parsed = parsePathId(param);
  if ("reply" in parsed) return parsed.reply;
  deps.counters.countPoll(parsed.id);
  const task = deps.generations.get(parsed.id);
  if (!task) return noted(detailReply(404, `Generation ${parsed.id} not found`), `task ${parsed.id} unknown`);
  deps.counters.countAnswer(task.id, task.status, Date.now());
  return noted(jsonReply(200, taskBody(task, deps.assets)), `task ${task.id} ${task.status}`);
};

function checkSpeech(body: unknown): { voiceId: Id; text: string } | Violation[] {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return [{ loc: [], msg: "the request body must be a JSON object", type: "dict_type" }];
  }
  const { voiceId, text } = body as Record<string, unknown>;
  const violations: Violation[] = [];
  const id = readId(voiceId);
  if (voiceId === undefined || voiceId === null) {
    violations.push({ loc: ["voiceId"], msg: "voiceId is required: a voice id", type: "missing" });
  } else if (id === undefined) {
    violations.push({ loc: ["voiceId"], msg: "voiceId must be a positive integer", type: "int_type" });
  }
  if (text === undefined || text === null) {
    violations.push({ loc: ["text"], msg: "text is required: the words to speak", type: "missing" });
  } else if (typeof text !== "string") {
    violations.push({ loc: ["text"], msg: "text must be a string", type: "string_type" });
  } else if (text.trim() === "") {
    violations.push({ loc: ["text"], msg: "text must not be empty", type: "string_too_short" });
  } else if (text.length > MAX_SPEECH_CHARS) {
    violations.push({
      loc: ["text"],
      msg: `text must be at most ${MAX_SPEECH_CHARS} characters`,
      type: "string_too_long",
    });
  }
  if (violations.length > 0 || id === undefined || typeof text !== "string") return violations;
  return { voiceId: id, text };
}

/** The name of an asset's file in the data dir (the record keeps it, so restores never rebuild it). */
function assetFileName(id: Id, format: MediaFormat): string {
  return `${id}.${MEDIA_FORMATS[format].extension}`;
}

const createSpeech: Handler = async (req, _param, deps) => {
  const body = await readJsonBody(req);
  if (!body.ok) return body.reply;
  const checked = checkSpeech(body.value);
  if (Array.isArray(checked)) return validationReply("body", checked);
  const refusal = deps.credits.refuseWhenExhausted("speech");
  if (refusal !== undefined) return noted(detailReply(402, refusal), "no credits left");
  const id = deps.nextId();
  const path = join(deps.assetDir, assetFileName(id, "wav"));
  const speech = await writeSpeech(path, checked.voiceId, checked.text);
  const asset = deps.assets.add({
    id,
    origin: "speech",
    format: "wav",
    path,
    size: speech.size,
    etag: `speech-${id}`,
  });
  deps.counters.countSpeech(checked.voiceId, checked.text);
  return noted(
    jsonReply(200, { id: jsonId(id), duration: speech.seconds, url: deps.assets.url(asset) }),
    `speech ${id}, voice ${checked.voiceId}`,
  );
};

const uploadAsset: Handler = async (req, _param, deps) => {
  const outcome = await receiveUpload(req, deps.tmpDir);
  if (!outcome.ok) return outcome.reply;
  const { file } = outcome;
  const id = deps.nextId();
  const path = join(deps.assetDir, assetFileName(id, file.format));
  await rename(file.path, path);
  deps.assets.add({
    id,
    origin: "upload",
    format: file.format,
    path,
    size: file.size,
    etag: file.sha256.slice(0, 32),
    sha256: file.sha256,
  });
  deps.counters.countUpload(file.sha256);
  return noted(jsonReply(200, { id: jsonId(id) }), `asset ${id}, ${file.format}, ${file.size} bytes`);
};

const getAsset: Handler = async (_req, param, deps) => {
  const parsed = parsePathId(param);
  if ("reply" in parsed) return parsed.reply;
  const asset = deps.assets.get(parsed.id);
  if (!asset) return noted(detailReply(404, `Asset ${parsed.id} not found`), `asset ${parsed.id} unknown`);
  return noted(jsonReply(200, { id: jsonId(asset.id), url: deps.assets.url(asset) }), `asset ${asset.id}`);
};

const deleteAsset: Handler = async (_req, param, deps) => {
  const parsed = parsePathId(param);
  if ("reply" in parsed) return parsed.reply;
  if (!(await deps.assets.delete(parsed.id))) {
    return noted(detailReply(404, `Asset ${parsed.id} not found`), `asset ${parsed.id} unknown`);
  }
  return noted(jsonReply(200, { id: jsonId(parsed.id) }), `asset ${parsed.id} deleted`);
};

export const HANDLERS: Readonly<Record<ApiRoute, Handler>> = {
  "POST /v1/generations": createGeneration,
  "GET /v1/generations/:id": getGeneration,
  "POST /v1/audios": createSpeech,
  "POST /v1/assets": uploadAsset,
  "GET /v1/assets/:id": getAsset,
  "DELETE /v1/assets/:id": deleteAsset,
};
