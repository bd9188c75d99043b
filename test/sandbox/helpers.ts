// Shared plumbing of the sandbox tests: real HTTP through undici against a sandbox each test starts
// and closes itself, and the committed fixture files.
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { request } from "undici";
import { type Sandbox, type SandboxOptions, startSandbox } from "../../src/sandbox/index.js";

export const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));

export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  /** The exact JSON text, to check ids above 2^53 digit by digit. */
  readonly text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read loosely-shaped JSON bodies.
  readonly json: any;
}

export interface Api {
  readonly sandbox: Sandbox;
  call(method: string, path: string, options?: { body?: unknown; key?: string | null }): Promise<RawResponse>;
  upload(bytes: Uint8Array, name?: string, key?: string | null): Promise<RawResponse>;
  waitForFinal(id: string, timeoutMs?: number): Promise<RawResponse>;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Starts a sandbox, runs `fn` with a small HTTP helper bound to it, and always closes it. */
export async function withSandbox<T>(options: SandboxOptions, fn: (api: Api) => Promise<T>): Promise<T> {
  const sandbox = await startSandbox(options);
  const auth = (key: string | null | undefined): Record<string, string> => {
    const value = key === undefined ? sandbox.apiKey : key;
    return value === null ? {} : { authorization: `Bearer ${value}` };
  };
  const api: Api = {
    sandbox,
    async call(method, path, options = {}) {
      const body =
        options.body === undefined
          ? undefined
          : typeof options.body === "string"
            ? options.body
            : JSON.stringify(options.body);
      const res = await request(`${sandbox.baseUrl}${path}`, {
        method: method as "GET",
        headers: {
          ...auth(options.key),
          ...(body !== undefined ? { "content-type": "application/json" } : {}),
        },
        ...(body !== undefined ? { body } : {}),
      });
      const text = await res.body.text();
      return { status: res.statusCode, headers: res.headers, text, json: parse(text) };
    },
    async upload(bytes, name = "upload.bin", key) {
      const form = new FormData();
      form.append("file", new Blob([bytes]), name);
      const res = await fetch(`${sandbox.baseUrl}/v1/assets`, {
        method: "POST",
        headers: auth(key),
        body: form,
      });
      const text = await res.text();
      return { status: res.status, headers: Object.fromEntries(res.headers), text, json: parse(text) };
    },
    async waitForFinal(id, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const res = await api.call("GET", `/v1/generations/${id}`);
        if (res.status !== 200 || ["Success", "Fail", "Canceled"].includes(res.json.status)) return res;
        if (Date.now() > deadline)
          throw new Error(`task ${id} still ${res.json.status} after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
  };
  try {
    return await fn(api);
  } finally {
    await sandbox.close();
  }
}

export function fixture(name: string): Promise<Buffer> {
  return readFile(`${FIXTURES}${name}`);
}

/** The id of a `{"id": <integer>}` body, read from the raw text so no digit is lost. */
export function idOf(res: RawResponse): string {
  const found = /"id":(\d+)/.exec(res.text);
  if (!found?.[1]) throw new Error(`no id in ${res.status} ${res.text}`);
  return found[1];
}

export function actorRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: "actor-2",
    resolution: "720p",
    aspectRatio: "16:9",
    chunks: [{ duration: 5, conditions: [{ type: "text", content: "a calm hello" }] }],
    ...overrides,
  };
}

export function avatarRequest(imageId: string, audioId: string, duration = 5): Record<string, unknown> {
  return {
    model: "avatar-h1",
    resolution: "540p",
    aspectRatio: "1:1",
    source: { type: "image", content: imageId },
    chunks: [{ duration, conditions: [{ type: "audio", content: audioId }] }],
  };
}
