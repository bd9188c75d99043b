// Uploads and speech on the state file (AssetRecords, SpeechRecords: sql/assets.ts, sql/speech.ts).
import type { AssetRecords, SpeechRecords } from "../../job-store.js";
import type { SqlContext } from "../sql/context.js";
import * as assets from "../sql/assets.js";
import * as speech from "../sql/speech.js";

/** `ownUploads`: the upload intents this store wrote (one it did not write is another process's). */
export function assetRecords(c: SqlContext, ownUploads: Set<string>): AssetRecords & SpeechRecords {
  return {
    async findAsset(sha256) {
      return assets.findAsset(c, sha256);
    },
    async markUploading(sha256) {
      assets.markUploading(c, ownUploads, sha256);
    },
    async forgetUploadIntent(sha256) {
      assets.forgetUploadIntent(c, sha256);
    },
    async takeInterruptedUploads() {
      return assets.takeInterruptedUploads(c);
    },
    async recordAsset(sha256, assetId, size) {
      assets.recordAsset(c, sha256, assetId, size);
    },
    async madeAsset(assetId) {
      return assets.madeAsset(c, assetId);
    },
    async forgetAssetId(assetId) {
      assets.forgetAssetId(c, assetId);
    },
    async findSpeech(voiceId, text) {
      return speech.findSpeech(c, voiceId, text);
    },
    async markSpeechCreating(voiceId, text, charge) {
      return speech.markSpeechCreating(c, voiceId, text, charge);
    },
    async markSpeechDone(voiceId, text, assetId, duration) {
      speech.markSpeechDone(c, voiceId, text, assetId, duration);
    },
    async markSpeechUncertain(voiceId, text, error) {
      speech.markSpeechUncertain(c, voiceId, text, error);
    },
    async clearSpeech(voiceId, text) {
      speech.clearSpeech(c, voiceId, text);
    },
    async markInterruptedSpeechUncertain() {
      return speech.markInterruptedSpeechUncertain(c);
    },
  };
}
