// The bodies of the requests the client sends, made anew for each attempt: JSON (a speech's voiceId
// a bare integer), one multipart `file` part around an upload's stream; and an id checked before it
// goes into a path.
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import type { Id } from "../service-contract/api-types.js";
import type { UploadSource } from "./service-client.js";

export function idPath(id: Id): string {
  if (!/^\d+$/.test(id)) throw new TypeError(`not an id: ${JSON.stringify(id)}`);
  return id;
}

/** One `file` part of multipart/form-data around the source's stream, with its exact length. */
export function multipartBody(file: UploadSource): {
  body: Readable;
  contentType: string;
  length: number;
  bytes: number;
} {
  const boundary = `reel-${randomBytes(16).toString("hex")}`;
  // Quoted as browsers do (WHATWG multipart/form-data encoding).
  const name = file.filename.replace(/\r/g, "%0D").replace(/\n/g, "%0A").replace(/"/g, "%22");
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\n` +
      "Content-Type: application/octet-stream\r\n\r\n",
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  async function* parts(): AsyncGenerator<Uint8Array> {
    yield head;
    yield* file.read();
    yield tail;
  }
  return {
    body: Readable.from(parts(), { objectMode: false }),
    contentType: `multipart/form-data; boundary=${boundary}`,
    length: head.length + file.size + tail.length,
    bytes: file.size,
  };
}

export function jsonBody(value: object): () => Promise<{ body: string; contentType: string }> {
  // Ids are decimal strings in reel; the spec accepts numeric strings for asset ids, and
  // voiceId (of a speech request) is written as a bare integer so that no precision is lost either
  // way. Other bodies skip the replacer: a generation is submitted thousands of times a run.
  if (!("voiceId" in value)) {
    const plain = JSON.stringify(value);
    return async () => ({ body: plain, contentType: "application/json" });
  }
  const text = JSON.stringify(value, (key, v) =>
    key === "voiceId" && typeof v === "string" ? `#int:${v}` : v,
  );
  const body = text.replace(/"#int:(\d+)"/g, "$1");
  return async () => ({ body, contentType: "application/json" });
}
