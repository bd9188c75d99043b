// Bearer-key check of every /v1 call. The comparison runs in constant time over digests so the
// emulator does not teach a bad habit, and the key is never echoed in a response or a log.
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

export type AuthResult = "ok" | "missing" | "invalid";

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

export function checkBearer(headers: IncomingHttpHeaders, apiKey: string): AuthResult {
  const header = headers.authorization;
  if (header === undefined || header.trim() === "") return "missing";
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1]) return "invalid";
  return timingSafeEqual(digest(match[1]), digest(apiKey)) ? "ok" : "invalid";
}

export const AUTH_MESSAGES: Readonly<Record<Exclude<AuthResult, "ok">, string>> = {
  missing: "Not authenticated: send the header Authorization: Bearer <API key>",
  invalid: "Invalid API key",
};
