// Lossless decoding of the service's JSON: int64 ids above 2^53 cannot be JavaScript numbers, so
// ids are kept as decimal strings, and a body that may hold such a number is parsed by lossless-json,
// which keeps every number's text.
import { isLosslessNumber, parse } from "lossless-json";
import type { Asset, GeneratedAudio, GenerationTask, Id, TaskStatus } from "../service-contract/api-types.js";
import { TASK_STATUSES } from "../service-contract/api-types.js";
import { DecodeError } from "../errors/service.js";

type Json = unknown;

/**
 * 16 digits in a row: a number JSON.parse might round (2^53 has 16 digits, so every integer of 15
 * digits or fewer is exact as a double). Also matches digits inside strings, which only costs speed.
 */
const LONG_NUMBER = /\d{16}/;

export function parseJson(text: string): Json {
  try {
    // Nearly every answer holds only short numbers. JSON.parse reads those exactly, several times
    // faster than lossless-json and with far less garbage; a run reads two answers per video.
    return LONG_NUMBER.test(text) ? parse(text) : (JSON.parse(text) as Json);
  } catch (error) {
    throw new DecodeError(`invalid JSON (${(error as Error).message})`);
  }
}

function field(body: Json, name: string): unknown {
  if (body === null || typeof body !== "object" || Array.isArray(body))
    throw new DecodeError("expected an object");
  return (body as Record<string, unknown>)[name];
}

const INTEGER = /^-?\d+$/;

/**
 * The largest id accepted: the interface says int64, but an unsigned 64-bit id is kept (a service
 * may number that way); past 64 bits it is no id the service could be asked about again.
 */
const MAX_ID = 2n ** 64n - 1n;

/**
 * An id as the service sent it, as a decimal string. Ids are positive: a 0 or a negative one is a
 * broken answer, never a task to poll (GET /v1/generations/-5 can only fail, forever).
 */
export function decodeId(value: unknown, name = "id"): Id {
  // Read by JSON.parse: short enough to be exact (see parseJson). The common case, kept cheap.
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 1) return String(value);
  let id: bigint | undefined;
  if (isLosslessNumber(value) && INTEGER.test(value.value)) id = BigInt(value.value);
  else if (typeof value === "string" && INTEGER.test(value)) id = BigInt(value);
  else if (typeof value === "number" && Number.isSafeInteger(value)) id = BigInt(value);
  if (id === undefined) throw new DecodeError(`${name} is not an integer id`);
  if (id < 1n) throw new DecodeError(`${name} ${id} is not a valid id (ids are 1 or more)`);
  if (id > MAX_ID)
    throw new DecodeError(`${name} ${id} is not a valid id (ids are 64-bit, at most ${MAX_ID})`);
  return id.toString();
}

function optionalId(value: unknown, name: string): Id | undefined {
  return value === undefined || value === null ? undefined : decodeId(value, name);
}

function decodeNumber(value: unknown, name: string): number {
  if (isLosslessNumber(value)) return Number(value.value);
  if (typeof value === "number") return value;
  throw new DecodeError(`${name} is not a number`);
}

function decodeString(value: unknown, name: string): string {
  if (typeof value !== "string") throw new DecodeError(`${name} is not a string`);
  return value;
}

function optionalString(value: unknown, name: string): string | undefined {
  return value === undefined || value === null || value === "" ? undefined : decodeString(value, name);
}

export function decodeIdResponse(body: Json): { id: Id } {
  return { id: decodeId(field(body, "id")) };
}

export function decodeAsset(body: Json): Asset {
  return { id: decodeId(field(body, "id")), url: decodeString(field(body, "url"), "url") };
}

export function decodeAudio(body: Json): GeneratedAudio {
  return {
    id: decodeId(field(body, "id")),
    duration: decodeNumber(field(body, "duration"), "duration"),
    url: decodeString(field(body, "url"), "url"),
  };
}

export function decodeTask(body: Json): GenerationTask {
  const status = field(body, "status");
  if (typeof status !== "string" || !(TASK_STATUSES as readonly string[]).includes(status)) {
    throw new DecodeError(`unknown task status ${JSON.stringify(status)}`);
  }
  const task: GenerationTask = {
    id: decodeId(field(body, "id")),
    status: status as TaskStatus,
    createTime: optionalString(field(body, "createTime"), "createTime") ?? "",
  };
  const url = optionalString(field(body, "resultVideoURL"), "resultVideoURL");
  if (url !== undefined) task.resultVideoURL = url;
  const videoId = optionalId(field(body, "resultVideoId"), "resultVideoId");
  if (videoId !== undefined) task.resultVideoId = videoId;
  // The spec does not name the field that carries a failure reason; accept the likely names.
  for (const name of ["failReason", "reason", "error", "message", "errorMessage"]) {
    const value = field(body, name);
    if (typeof value === "string" && value !== "") {
      task.failReason = value;
      break;
    }
  }
  return task;
}

/** The human message and field issues of an error body (FastAPI-style `detail`, or `message`/`error`). */
export function decodeErrorBody(text: string): {
  message?: string;
  issues: { path: string; message: string }[];
} {
  let body: unknown;
  try {
    body = parse(text);
  } catch {
    const trimmed = text.trim().slice(0, 300);
    return trimmed ? { message: trimmed, issues: [] } : { issues: [] };
  }
  if (body === null || typeof body !== "object") return { issues: [] };
  const record = body as Record<string, unknown>;
  const detail = record.detail;
  if (Array.isArray(detail)) {
    const issues = detail.map((d) => {
      const item = (d ?? {}) as { loc?: unknown; msg?: unknown };
      const loc = Array.isArray(item.loc)
        ? item.loc.map((p) => (isLosslessNumber(p) ? p.value : String(p)))
        : [];
      return { path: loc.join("."), message: typeof item.msg === "string" ? item.msg : JSON.stringify(d) };
    });
    return { message: issues.map((i) => i.message).join("; "), issues };
  }
  for (const value of [detail, record.message, record.error]) {
    if (typeof value === "string") return { message: value, issues: [] };
  }
  return { issues: [] };
}
