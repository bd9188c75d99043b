// How a download's bytes reach the disk: gathered in memory, then written WRITE_BATCH_BYTES at a time
// with the socket paused while a write is under way, the hash fed once each write has landed, and
// the answer judged whole (or not) once the last write is done.
import { constants, openSync, write } from "node:fs";
import { MEDIA_FORMATS } from "../service-contract/media-format.js";
import { DownloadError } from "../errors/output.js";
import { type Exchange, fail, WRITE_BATCH_BYTES, WRITE_BATCH_CHUNKS } from "./download-exchange.js";

/** Windows has no O_DSYNC: there, every video is fdatasync'ed before its rename. */
const O_DSYNC: number = constants.O_DSYNC ?? 0;

/** Whether enough is gathered to write it now. */
export function batchFull(ex: Exchange): boolean {
  return ex.gatheredBytes >= WRITE_BATCH_BYTES || ex.gathered.length >= WRITE_BATCH_CHUNKS;
}

/** Writes what is gathered; `last` once the answer has ended (then the exchange is finished). */
export function writeGathered(ex: Exchange, last: boolean): void {
  const { file } = ex;
  const chunks = ex.gathered;
  const bytes = ex.gatheredBytes;
  ex.gathered = [];
  ex.gatheredBytes = 0;
  if (bytes === 0) {
    if (last) finish(ex);
    return;
  }
  if (file.fd === undefined) {
    // Exclusive: never through anything planted at the temp name. When the whole video is in
    // memory, it is written and put on disk by the same call (O_DSYNC).
    const dsync = last ? O_DSYNC : 0;
    try {
      file.fd = openSync(file.path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | dsync, 0o644);
    } catch (error) {
      fail(ex, error as Error);
      return;
    }
    file.created = true;
    file.synced = dsync !== 0;
  }
  ex.writing = true;
  if (!ex.ended) ex.controller?.pause();
  const at = file.size;
  const data = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes);
  writeAt(file.fd, data, at).then(
    () => {
      ex.writing = false;
      file.size = at + bytes;
      file.hash.update(data); // once on disk: a failed write must not count in the hash
      if (ex.failure) ex.settle(ex.failure);
      else if (ex.ended) writeGathered(ex, true);
      else if (batchFull(ex)) writeGathered(ex, false);
      else ex.controller?.resume();
    },
    (error: unknown) => {
      ex.writing = false;
      fail(ex, error as Error);
    },
  );
}

/** The answer has ended and all of it is written: a redirect, the whole video, or a failure. */
function finish(ex: Exchange): void {
  const { position, expectedTotal } = ex;
  if (ex.location !== undefined) {
    ex.settle(undefined);
  } else if (position > 0 && !ex.signatureChecked) {
    ex.settle(
      new DownloadError(
        `the result address did not serve ${MEDIA_FORMATS.mp4.words} (got ${ex.contentType})`,
      ),
    );
  } else if (expectedTotal !== undefined && position !== expectedTotal) {
    ex.settle(new DownloadError(`the download ended at ${position} of ${expectedTotal} bytes`, "retry"));
  } else if (position === 0) {
    ex.settle(new DownloadError("the result address served an empty body", "retry"));
  } else {
    ex.settle(undefined);
  }
}

/** Writes all of `bytes` at `position` of `fd`. */
async function writeAt(fd: number, bytes: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    done += await new Promise<number>((resolve, reject) =>
      write(fd, bytes, done, bytes.length - done, position + done, (error, n) =>
        error ? reject(error) : resolve(n),
      ),
    );
  }
}
