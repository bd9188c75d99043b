// Uploads and speech on the state file (AssetRecords, SpeechRecords: sql/assets.ts, sql/speech.ts).
import type { SpeechCharge, SpeechRow, AssetRecords, SpeechRecords } from "../../job-store.js";
import type { SqlContext } from "../sql/context.js";
import * as assets from "../sql/assets.js";
import * as speech from "../sql/speech.js";

/** `ownUploads`: the upload intents this store wrote (one it did not write is another process's). */
export function assetRecords(c: SqlContext, ownUploads: Set<string>): AssetRecords & SpeechRecords {
  return {
    async findAsset(sha256: string): Promise<string | undefined> {
      return assets.findAsset(c, sha256);
    },
    async markUploading(sha256: string): Promise<void> {
      assets.markUploading(c, ownUploads, sha256);
    },
    async forgetUploadIntent(sha256: string): Promise<void> {
      assets.forgetUploadIntent(c, sha256);
    },
    async takeInterruptedUploads(): Promise<number> {
      return assets.takeInterruptedUploads(c);
    },
    async recordAsset(sha256: string, assetId: string, size: number): Promise<void> {
      assets.recordAsset(c, sha256, assetId, size);
    },
    async madeAsset(assetId: string): Promise<boolean> {
      return assets.madeAsset(c, assetId);
    },
    async forgetAssetId(assetId: string): Promise<void> {
      assets.forgetAssetId(c, assetId);
    },
    async findSpeech(voiceId: string, text: string): Promise<SpeechRow | undefined> {
      return speech.findSpeech(c, voiceId, text);
    },
    async markSpeechCreating(voiceId: string, text: string, charge?: SpeechCharge): Promise<void> {
      return speech.markSpeechCreating(c, voiceId, text, charge);
    },
    async markSpeechDone(voiceId: string, text: string, assetId: string, duration: number): Promise<void> {
      speech.markSpeechDone(c, voiceId, text, assetId, duration);
    },
    async markSpeechUncertain(voiceId: string, text: string, error: string): Promise<void> {
      speech.markSpeechUncertain(c, voiceId, text, error);
    },
    async clearSpeech(voiceId: string, text: string): Promise<void> {
      speech.clearSpeech(c, voiceId, text);
    },
    async markInterruptedSpeechUncertain(): Promise<number> {
      return speech.markInterruptedSpeechUncertain(c);
    },
  };
}
