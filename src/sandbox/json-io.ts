// JSON in and out of the emulator without losing digits: request bodies are parsed with
// lossless-json and ids are written as exact JSON integers, even above 2^53, because catching a
// client that rounds ids is one of the reasons the sandbox exists.
import type { IncomingMessage } from "node:http";
import { isLosslessNumber, LosslessNumber, parse, stringify } from "lossless-json";
import type { Id } from "../service-contract/api-types.js";
import type { Violation } from "../service-contract/check-request.js";

/** A response computed by a handler, sent (or replaced by a fault) by the server. */
export interface Reply {
  readonly status: number;
  readonly body: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** What the request was about, for the request log (`task 1017 Running`, `asset 1003`); never sent. */
  readonly note?: string;
}

/** `reply` with a note for the request log. */
export function noted(reply: Reply, note: string): Reply {
  return { ...reply, note };
}

/** An id written as a JSON integer rather than a string. */
export function jsonId(id: Id): LosslessNumber {
  return new LosslessNumber(id);
}

export function jsonReply(status: number, value: unknown, headers?: Readonly<Record<string, string>>): Reply {
  return { status, body: stringify(value) ?? "null", ...(headers ? { headers } : {}) };
}

/** FastAPI's shape for errors that are not field validation: `{"detail": "..."}`. */
export function detailReply(
  status: number,
  detail: string,
  headers?: Readonly<Record<string, string>>,
): Reply {
  return jsonReply(status, { detail }, headers);
}

/** FastAPI's 422 shape; `where` is the first element of every loc ("body", "path"). */
export function validationReply(where: string, violations: readonly Violation[]): Reply {
  return jsonReply(422, {
    detail: violations.map((v) => ({ loc: [where, ...v.loc], msg: v.msg, type: v.type })),
  });
}

/** JSON bodies above this are refused; generation requests are a few kilobytes. */
export const MAX_JSON_BYTES = 1024 * 1024;

export type BodyResult =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reply: Reply };

export async function readJsonBody(req: IncomingMessage): Promise<BodyResult> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of req) {
    const buffer = part as Buffer;
    size += buffer.length;
    if (size > MAX_JSON_BYTES) {
      return {
        ok: false,
        reply: detailReply(413, `Request body too large: at most ${MAX_JSON_BYTES} bytes`),
      };
    }
    parts.push(buffer);
  }
  const text = Buffer.concat(parts).toString("utf8");
  if (text.trim() === "") {
    return {
      ok: false,
      reply: validationReply("body", [{ loc: [], msg: "Field required", type: "missing" }]),
    };
  }
  try {
    return { ok: true, value: parse(text) };
  } catch (error) {
    const position = /position (\d+)/.exec((error as Error).message)?.[1];
    return {
      ok: false,
      reply: validationReply("body", [
        {
          loc: position === undefined ? [] : [Number(position)],
          msg: `JSON decode error: ${(error as Error).message}`,
          type: "json_invalid",
        },
      ]),
    };
  }
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value === "object" && value !== null && !isLosslessNumber(value)) {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return Object.fromEntries(entries.map(([k, v]) => [k, sortKeys(v)]));
  }
  return value;
}

/** One text per distinct request, whatever the key order: how duplicate submissions are counted. */
export function canonicalJson(value: unknown): string {
  return stringify(sortKeys(value)) ?? "null";
}
