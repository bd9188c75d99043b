// How a download reads the answer to its request (undici's dispatch handler): a redirect is followed
// by the caller, an expired address said so, a resumed transfer appended only where it asked, the
// MP4 signature checked before anything is written, the size capped while streaming, and a broken
// transfer kept for the next attempt to resume after.
import type { Dispatcher } from "undici";
import { describeTransportFailure, isCertificateFailure, isTlsFailure } from "../errors/service.js";
import { MEDIA_FORMATS } from "../service-contract/media-format.js";
import { DownloadError } from "../errors/output.js";
import { type Exchange, fail, isMp4Start, MAX_REDIRECT_BODY, startOver } from "./download-exchange.js";
import { batchFull, writeGathered } from "./download-writes.js";

type AnswerHeaders = Parameters<NonNullable<Dispatcher.DispatchHandler["onResponseStart"]>>[2];

export function answerHandler(ex: Exchange): Dispatcher.DispatchHandler {
  const { signal } = ex;
  return {
    onRequestStart(c) {
      ex.controller = c;
      if (signal?.aborted) c.abort(signal.reason as Error);
    },
    onResponseStart(c, statusCode, headers) {
      onStatus(ex, c, statusCode, headers);
    },
    onResponseData(c, chunk) {
      ex.watchdog.add(chunk.length);
      if (ex.failure) return;
      if (ex.location !== undefined || ex.alreadyWhole) {
        // A redirect's or a 416's body: not the video. A long one is cut (the answer is known).
        ex.ignoredBytes += chunk.length;
        if (ex.ignoredBytes > MAX_REDIRECT_BODY) {
          ex.settle(undefined);
          c.abort(new DownloadError("the redirect's body was cut"));
        }
        return;
      }
      if (ex.position + chunk.length > ex.maxBytes) {
        fail(ex, new DownloadError(`the result video is larger than the ${ex.maxBytes}-byte limit`));
        return;
      }
      ex.gathered.push(chunk);
      ex.gatheredBytes += chunk.length;
      ex.position += chunk.length;
      if (!ex.signatureChecked && ex.position >= 8) {
        // The file's first bytes, all in memory still (nothing is written before they are checked).
        if (!isMp4Start(ex.gathered.length === 1 ? chunk : Buffer.concat(ex.gathered))) {
          fail(
            ex,
            new DownloadError(
              `the result address did not serve ${MEDIA_FORMATS.mp4.words} (got ${ex.contentType})`,
            ),
          );
          return;
        }
        ex.signatureChecked = true;
      }
      if (ex.writing)
        c.pause(); // resumed when the write under way ends
      else if (batchFull(ex) && ex.signatureChecked) writeGathered(ex, false);
    },
    onResponseEnd() {
      ex.ended = true;
      if (ex.writing) return; // the write under way goes on from here
      if (ex.failure) ex.settle(ex.failure);
      else writeGathered(ex, true);
    },
    onResponseError(_c, error) {
      ex.ended = true;
      // In reel's words, on one line (OpenSSL's text spans lines); a refused certificate is final.
      const why =
        error instanceof DownloadError || signal?.aborted
          ? error
          : isTlsFailure(error)
            ? new DownloadError(
                describeTransportFailure(error, ex.url.host),
                isCertificateFailure(error) ? "refused" : "retry",
              )
            : new DownloadError(
                `the download broke off after ${ex.position} bytes: ${describeTransportFailure(error)}`,
                "retry",
              );
      ex.failure ??= why;
      if (ex.writing) return; // settled when it ends
      // A broken transfer: what arrived is kept, so that the next attempt resumes after it.
      const resumable = ex.failure instanceof DownloadError && ex.failure.failure === "retry";
      if (ex.gatheredBytes > 0 && ex.signatureChecked && resumable) writeGathered(ex, false);
      else ex.settle(ex.failure);
    },
  };
}

/** The answer's status and headers: what the body that follows is, if it is to be kept. */
function onStatus(
  ex: Exchange,
  c: Dispatcher.DispatchController,
  statusCode: number,
  headers: AnswerHeaders,
): void {
  const { file } = ex;
  if (statusCode < 200) return; // 1xx informational: the real answer follows
  const redirect = headers.location;
  if (statusCode >= 300 && statusCode < 400 && redirect) {
    ex.location = String(redirect); // its body (if any) is let through unread, so the socket is reused
    return;
  }
  if (statusCode === 403 || statusCode === 404 || statusCode === 410) {
    fail(ex, new DownloadError(`the result address answered ${statusCode}`, "expired"));
    return;
  }
  const range = /^bytes (?:(\d+)-\d+|\*)\/(\d+|\*)$/.exec(String(headers["content-range"] ?? ""));
  if (statusCode === 416 && range?.[2] !== undefined && Number(range[2]) === file.size && file.size > 0) {
    ex.alreadyWhole = true; // asked for the bytes after the end: the video is all here
    ex.expectedTotal = file.size;
    return;
  }
  if (statusCode !== 200 && statusCode !== 206) {
    if (statusCode === 416) startOver(ex);
    fail(ex, new DownloadError(`the result address answered ${statusCode}`, "retry"));
    return;
  }
  if (statusCode === 200 && file.size > 0) startOver(ex); // the server ignored Range
  let total: number | undefined;
  if (statusCode === 206) {
    // Only the part asked for may be appended; anything else would stitch a corrupt video.
    if (range?.[1] === undefined || Number(range[1]) !== file.size) {
      const got = String(headers["content-range"] ?? "no Content-Range");
      startOver(ex);
      fail(ex, new DownloadError(`the result address answered another range than asked (${got})`, "retry"));
      return;
    }
    if (range[2] !== "*") total = Number(range[2]);
  }
  ex.contentType = String(headers["content-type"] ?? ex.contentType);
  const announced = Number(headers["content-length"] ?? Number.NaN);
  ex.expectedTotal = total ?? (Number.isFinite(announced) ? ex.position + announced : undefined);
  if (ex.expectedTotal !== undefined && ex.expectedTotal > ex.maxBytes) {
    c.abort(new DownloadError(`the result video is larger than the ${ex.maxBytes}-byte limit`));
  }
}
