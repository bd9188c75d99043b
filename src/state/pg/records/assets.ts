// Uploads and speech on the shared store (AssetRecords, SpeechRecords: sql/assets.ts, sql/speech.ts;
// the intent of a speech call is the fleet's, fenced: sql/fleet.ts).
import type { AssetRecords, SpeechRecords } from "../../job-store.js";
import type { PgSide } from "./side.js";
import { startSpeech } from "../sql/fleet.js";
import * as assets from "../sql/assets.js";
import * as speech from "../sql/speech.js";

/** `ownUploads`: the upload intents this store wrote (one it did not write is another runner's). */
export function assetRecords(s: PgSide, ownUploads: Set<string>): AssetRecords & SpeechRecords {
  return {
    findAsset(sha256) {
      return s.io(() => assets.findAsset(s.c, sha256));
    },
    markUploading(sha256) {
      return s.io(() => assets.markUploading(s.writer(), ownUploads, sha256));
    },
    forgetUploadIntent(sha256) {
      return s.io(() => assets.forgetUploadIntent(s.writer(), sha256));
    },
    /** Those of gone runners only (see sql/takeover.ts). */
    async takeInterruptedUploads() {
      return (await s.takeOverLost()).uploads;
    },
    recordAsset(sha256, assetId, size) {
      return s.io(() => assets.recordAsset(s.c, sha256, assetId, size));
    },
    madeAsset(assetId) {
      return s.io(() => assets.madeAsset(s.c, assetId));
    },
    forgetAssetId(assetId) {
      return s.io(() => assets.forgetAssetId(s.c, assetId));
    },
    findSpeech(voiceId, text) {
      return s.io(() => speech.findSpeech(s.c, voiceId, text));
    },
    markSpeechCreating(voiceId, text, charge) {
      return s.fenced(s.io(() => startSpeech(s.writer(), voiceId, text, charge)));
    },
    markSpeechDone(voiceId, text, assetId, duration) {
      return s.io(() => speech.markSpeechDone(s.c, voiceId, text, assetId, duration));
    },
    markSpeechUncertain(voiceId, text, error) {
      return s.io(() => speech.markSpeechUncertain(s.c, voiceId, text, error));
    },
    clearSpeech(voiceId, text) {
      return s.io(() => speech.clearSpeech(s.writer(), voiceId, text));
    },
    /** Those of gone runners only (see sql/takeover.ts). */
    async markInterruptedSpeechUncertain() {
      return (await s.takeOverLost()).speech;
    },
  };
}
