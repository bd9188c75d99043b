// Uploads of files (local, or fetched copies of remote sources): each distinct content once per
// service, from a descriptor opened without following a link and checked to be the file that was
// checked, its bytes hashed on the way so that a file edited meanwhile is never stored.
import { createHash } from "node:crypto";
import type { FileHandle } from "node:fs/promises";
import { basename } from "node:path";
import { classify } from "../client/index.js";
import { READ_CHUNK } from "../sha256.js";
import { isLinkRefusal, openNoFollow, sameFile, stampOf } from "../manifest/validate/media-file.js";
import type { Id } from "../service-contract/api-types.js";
import type { AssetContext, CheckedFile } from "./asset-context.js";
import { SourceChangedError } from "../errors/engine.js";

export async function uploadFile(ac: AssetContext, file: CheckedFile, job: string | undefined): Promise<Id> {
  const { store, intents } = ac;
  const { sha256 } = file;
  return ac.once(`sha:${sha256}`, async () => {
    for (let turn = 0; ; turn++) {
      const known = await store.findAsset(sha256);
      if (known) return known;
      try {
        return await uploadNew(ac, file, job);
      } catch (error) {
        if (!intents.otherRunnerWon(error)) throw error;
      }
      await ac.waitForOtherRunner(turn);
    }
  });
}

/** Uploads content the store has no asset for (the caller holds its key: see `once`). */
async function uploadNew(ac: AssetContext, file: CheckedFile, job: string | undefined): Promise<Id> {
  const { store, queue, progress, client, signal, intents, options } = ac;
  const { sha256 } = file;
  const result = await queue.add(async () => {
    // Opened here, in the queue: file descriptors are bounded by the uploads at once.
    const handle = await openChecked(file);
    try {
      // The intent makes an upload cut off by a crash visible: the service may have stored it, and
      // with no way to look an asset up by content, the next run can only upload it again.
      // A shared store refuses it for content another runner recorded since the caller looked.
      await store.markUploading(sha256);
      progress.event({ stage: "uploading", asset: sha256, detail: file.named, bytes: file.size, key: job });
      const sent = (bytes: number): void => progress.event({ stage: "upload-bytes", asset: sha256, bytes });
      try {
        return await client.uploadAsset(
          {
            filename: basename(file.path),
            size: file.size,
            read: () => readVerified(handle, file, sent),
          },
          { signal },
        );
      } catch (error) {
        progress.event({ stage: "upload-ended", asset: sha256 });
        // Refused for certain (see client/classify.ts), or cut before its end because the file
        // changed: nothing was stored on the service, so the next run has no lost upload to report.
        // In a fleet, any failure: while its intent stays, the other runners wait for this upload.
        if (intents.dropsUploadIntent(mayHaveStored(error))) await store.forgetUploadIntent(sha256);
        throw error;
      }
    } finally {
      await handle.close();
    }
  });
  await store.recordAsset(sha256, result.id, file.size);
  options.onUpload?.(file.named, sha256);
  return result.id;
}

/**
 * Opens the file to upload without following a link, and makes sure it is the file that was checked
 * (same device and inode, size and modification time): a file swapped since is not read at all.
 */
async function openChecked(file: CheckedFile): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await openNoFollow(file.path);
  } catch (error) {
    if (isLinkRefusal(error)) throw new SourceChangedError(file.source, "was replaced by a link");
    if ((error as NodeJS.ErrnoException).code === "ENOENT")
      throw new SourceChangedError(file.source, "was removed");
    throw error;
  }
  try {
    const info = await handle.stat({ bigint: true });
    const now = stampOf(info);
    if (!info.isFile() || (file.stamp && (now.dev !== file.stamp.dev || now.ino !== file.stamp.ino))) {
      throw new SourceChangedError(file.source, "was replaced by another file");
    }
    if (now.size !== file.size || (file.stamp && !sameFile(now, file.stamp))) {
      throw new SourceChangedError(file.source, "was edited");
    }
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * The file's bytes from the open descriptor, hashed on the way. The last chunk is held back until
 * the whole file has been hashed: bytes that differ from what was checked (the file edited in place
 * during the upload) end the upload before its end, so the service stores nothing, and the hash the
 * state file keeps always names the content that was uploaded.
 */
async function* readVerified(
  handle: FileHandle,
  file: CheckedFile,
  sent: (bytes: number) => void,
): AsyncGenerator<Uint8Array> {
  const hash = createHash("sha256");
  let held: Buffer | undefined;
  let position = 0;
  while (position < file.size) {
    const chunk = Buffer.allocUnsafe(Math.min(READ_CHUNK, file.size - position));
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) break;
    hash.update(chunk.subarray(0, bytesRead));
    position += bytesRead;
    if (held) {
      yield held;
      sent(position - bytesRead); // everything up to this chunk was taken by the request
    }
    held = chunk.subarray(0, bytesRead);
  }
  const { bytesRead: beyond } = await handle.read(Buffer.alloc(1), 0, 1, position);
  if (position !== file.size || beyond > 0 || hash.digest("hex") !== file.sha256) {
    throw new SourceChangedError(file.source, "changed while it was being uploaded");
  }
  if (held) yield held;
}

/**
 * Whether a failed upload may have stored the file on the service: judged as classify judges a call
 * whose effect matters (a costed one). A file that changed was cut off by reel before its end.
 */
function mayHaveStored(error: unknown): boolean {
  if (error instanceof SourceChangedError) return false;
  return classify(error, { kind: "costed" }).mayHaveTakenEffect;
}
