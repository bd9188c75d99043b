// The errors of the work itself (src/engine): uploads, speech, https sources, and the guard against
// paying again for jobs sent to another address of the service.
import { ReelError } from "./reel-error.js";

/** A speech whose creation may have been paid already, with no answer recorded. */
export class SpeechUncertainError extends ReelError {
  constructor(voiceId: string, text: string) {
    super(
      "E_SPEECH_UNCERTAIN",
      `speech for voice ${voiceId} ("${text.slice(0, 40)}") may have been created already, but no answer was recorded; rerun with --resubmit-uncertain to create it again`,
    );
  }
}

/**
 * A file changed between its check and its upload (replaced by a link or another file, edited):
 * nothing of it reached the service, and the next run checks it again.
 */
export class SourceChangedError extends ReelError {
  constructor(source: string, what: string) {
    super("E_SOURCE_CHANGED", `${source} ${what} after reel checked it, so it was not uploaded`);
  }
}

/** The one message for every https source refused for its address (engine/source-address.ts). */
export class PrivateSourceError extends ReelError {
  constructor(url: string) {
    super(
      "E_PRIVATE_SOURCE",
      `could not fetch ${url}: reel fetches sources from public addresses only, not loopback, link-local or private ones (give --allow-private-sources to allow them)`,
    );
  }
}

/** Jobs already sent to another base URL of the service (engine/service-alias-check.ts). */
export class SentElsewhereError extends ReelError {
  constructor(message: string) {
    super("E_OTHER_SERVICE", message);
  }
}
