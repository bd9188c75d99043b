// The review page is a web server on the reviewer's machine: any other page open in the same browser
// can send it requests, and a DNS name rebound to 127.0.0.1 can read its answers. Each guard here is
// one rule of who may ask what (docs/review.md, "The page"); the server applies them all.
import { timingSafeEqual } from "node:crypto";
import { realpathSync, statSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";

/** The cookie that carries the token after the first load. */
export const TOKEN_COOKIE = "reel_review";
/** The header an API call may carry the token in instead. */
export const TOKEN_HEADER = "x-reel-token";

/**
 * Whether the Host header names exactly the loopback address and port served: a page of another
 * site whose name resolves to 127.0.0.1 (DNS rebinding) sends its own name, and is refused.
 */
export function hostAllowed(host: string | undefined, port: number): boolean {
  return host === `127.0.0.1:${port}`;
}

/** Whether `given` is the token, compared in constant time. */
export function tokenMatches(given: string | undefined, token: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The value of cookie `name` in a Cookie header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

export type TokenCheck = "ok" | "missing" | "wrong";

/**
 * Whether a request carries the token, in the cookie or the header (an API call): "missing" (401)
 * or "wrong" (403) otherwise. The query's token is taken only by the first load (see the server).
 */
export function checkToken(
  headers: { readonly cookie?: string; readonly [TOKEN_HEADER]?: string | string[] },
  token: string,
): TokenCheck {
  const header = headers[TOKEN_HEADER];
  const given = typeof header === "string" ? header : cookieValue(headers.cookie, TOKEN_COOKIE);
  if (given === undefined || given === "") return "missing";
  return tokenMatches(given, token) ? "ok" : "wrong";
}

/** The Set-Cookie header that keeps the token: never readable by a script, never sent cross-site. */
export function tokenCookie(token: string): string {
  return `${TOKEN_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`;
}

/**
 * The real path of the file `urlPath` (as in /out/<urlPath>, still percent-encoded) names under the
 * output folder `outDir`, when it is a regular file there: undefined for `..`, a NUL, a symbolic
 * link (or folder) leading out of OUT, a folder, or nothing at all.
 */
export function fileInOut(outDir: string, urlPath: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  if (decoded.includes("\0") || decoded.split(/[/\\]/).includes("..")) return undefined;
  let root: string;
  let real: string;
  try {
    root = realpathSync(outDir);
    real = realpathSync(resolve(root, decoded));
  } catch {
    return undefined;
  }
  const inside = relative(root, real);
  if (inside === "" || inside.startsWith(`..${sep}`) || inside === ".." || isAbsolute(inside)) {
    return undefined;
  }
  try {
    return statSync(real).isFile() ? real : undefined;
  } catch {
    return undefined;
  }
}
