// Uploads and speech on the shared store (AssetRecords, SpeechRecords: sql/assets.ts, sql/speech.ts;
// the intent of a speech call is the fleet's, fenced: sql/fleet.ts).
import type { SpeechCharge, SpeechRow, AssetRecords, SpeechRecords } from "../../job-store.js";
import type { PgSide } from "./side.js";
import { startSpeech } from "../sql/fleet.js";
import * as assets from "../sql/assets.js";
import * as speech from "../sql/speech.js";

/** `ownUploads`: the upload intents this store wrote (one it did not write is another runner's). */
export function assetRecords(s: PgSide, ownUploads: Set<string>): AssetRecords & SpeechRecords {
  return {
    findAsset(sha256: string): Promise<string | undefined> {
      return s.io(() => assets.findAsset(s.c, sha256));
    },
    markUploading(sha256: string): Promise<void> {
      return s.io(() => assets.markUploading(s.writer(), ownUploads, sha256));
    },
    forgetUploadIntent(sha256: string): Promise<void> {
      return s.io(() => assets.forgetUploadIntent(s.writer(), sha256));
    },
    /** Those of gone runners only (see sql/takeover.ts). */
    async takeInterruptedUploads(): Promise<number> {
      return (await s.takeOverLost()).uploads;
    },
    recordAsset(sha256: string, assetId: string, size: number): Promise<void> {
      return s.io(() => assets.recordAsset(s.c, sha256, assetId, size));
    },
    madeAsset(assetId: string): Promise<boolean> {
      return s.io(() => assets.madeAsset(s.c, assetId));
    },
    forgetAssetId(assetId: string): Promise<void> {
      return s.io(() => assets.forgetAssetId(s.c, assetId));
    },
    findSpeech(voiceId: string, text: string): Promise<SpeechRow | undefined> {
      return s.io(() => speech.findSpeech(s.c, voiceId, text));
    },
    markSpeechCreating(voiceId: string, text: string, charge?: SpeechCharge): Promise<void> {
      return s.fenced(s.io(() => startSpeech(s.writer(), voiceId, text, charge)));
    },
    markSpeechDone(voiceId: string, text: string, assetId: string, duration: number): Promise<void> {
      return s.io(() => speech.markSpeechDone(s.c, voiceId, text, assetId, duration));
    },
    markSpeechUncertain(voiceId: string, text: string, error: string): Promise<void> {
      return s.io(() => speech.markSpeechUncertain(s.c, voiceId, text, error));
    },
    clearSpeech(voiceId: string, text: string): Promise<void> {
      return s.io(() => speech.clearSpeech(s.writer(), voiceId, text));
    },
    /** Those of gone runners only (see sql/takeover.ts). */
    async markInterruptedSpeechUncertain(): Promise<number> {
      return (await s.takeOverLost()).speech;
    },
  };
}
