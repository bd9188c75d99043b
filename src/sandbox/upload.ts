// Receives the multipart `file` part of POST /v1/assets straight to disk, hashing on the way: the
// client tests upload 200 MB in the same process and measure its memory, so nothing here may hold
// more than a stream buffer. The format is decided by content, never by the part's file name.
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import busboy from "busboy";
import { StreamTally } from "../sha256.js";
import {
  ACCEPTED_FORMATS_TEXT,
  type MediaFormat,
  SNIFF_BYTES,
  sniffFormat,
} from "../service-contract/media-format.js";
import { type Reply, validationReply } from "./json-io.js";
import { findCorruption } from "../service-contract/media-integrity.js";

export interface ReceivedFile {
  /** A temporary path under the data dir; the caller moves it or removes it. */
  readonly path: string;
  readonly size: number;
  readonly sha256: string;
  readonly format: MediaFormat;
}

export type UploadOutcome =
  { readonly ok: true; readonly file: ReceivedFile } | { readonly ok: false; readonly reply: Reply };

function refuse(msg: string, type: string, loc: (string | number)[] = ["file"]): UploadOutcome {
  return { ok: false, reply: validationReply("body", [{ loc, msg, type }]) };
}

interface Written {
  readonly size: number;
  readonly sha256: string;
  readonly head: Buffer;
}

async function writeHashed(stream: Readable, path: string): Promise<Written> {
  const tally = new StreamTally(SNIFF_BYTES);
  await pipeline(
    stream,
    async function* (source: AsyncIterable<Buffer>) {
      for await (const chunk of source) {
        tally.add(chunk);
        yield chunk;
      }
    },
    createWriteStream(path),
  );
  return { size: tally.size, sha256: tally.sha256(), head: tally.head };
}

/** Streams the upload to `tmpDir`, then checks its format and integrity. */
export async function receiveUpload(req: IncomingMessage, tmpDir: string): Promise<UploadOutcome> {
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: req.headers, limits: { files: 1, fields: 50, parts: 60 } });
  } catch {
    req.resume();
    return refuse("expected a multipart/form-data body with a part named file", "missing", []);
  }

  const path = join(tmpDir, `upload-${randomBytes(8).toString("hex")}`);
  let writing: Promise<Written> | undefined;
  const parsed = new Promise<void>((resolve, reject) => {
    parser.on("file", (name, stream) => {
      if (name !== "file" || writing) {
        stream.resume();
        return;
      }
      writing = writeHashed(stream, path);
      // Surface write errors through `parsed` too; the rejection is observed below.
      writing.catch(reject);
    });
    parser.on("close", resolve);
    parser.on("error", reject);
    req.on("error", reject);
    req.on("close", () => {
      if (!req.complete) reject(new Error("the client closed the connection during the upload"));
    });
  });
  req.pipe(parser);

  let written: Written;
  try {
    await parsed;
    if (!writing) return refuse("Field required: a part named file", "missing");
    written = await writing;
  } catch (error) {
    req.unpipe(parser);
    await rm(path, { force: true });
    return refuse(`the upload could not be read: ${(error as Error).message}`, "upload_error");
  }

  const outcome = await judge(path, written);
  if (!outcome.ok) await rm(path, { force: true });
  return outcome;
}

async function judge(path: string, written: Written): Promise<UploadOutcome> {
  if (written.size === 0) return refuse("the file is empty", "file_empty");
  const format = sniffFormat(written.head);
  if (format === undefined) {
    return refuse(`unsupported file format: accepted are ${ACCEPTED_FORMATS_TEXT}`, "file_format");
  }
  const problem = await findCorruption(path, format, written.size);
  if (problem !== undefined)
    return refuse(`corrupted or truncated ${format.toUpperCase()} file: ${problem}`, "file_corrupt");
  return { ok: true, file: { path, size: written.size, sha256: written.sha256, format } };
}
