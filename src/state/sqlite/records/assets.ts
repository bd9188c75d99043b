// Uploads and speech on the state file (AssetRecords, SpeechRecords: sql/assets.ts, sql/speech.ts).
import type { AssetRecords, SpeechRecords } from "../../job-store.js";
import { methodsOn, type SqlContext } from "../sql/context.js";
import * as assets from "../sql/assets.js";
import * as speech from "../sql/speech.js";

/** `ownUploads`: the upload intents this store wrote (one it did not write is another process's). */
export function assetRecords(c: SqlContext, ownUploads: Set<string>): AssetRecords & SpeechRecords {
  const on = methodsOn(c);
  return {
    findAsset: on(assets.findAsset),
    async markUploading(sha256) {
      assets.markUploading(c, ownUploads, sha256);
    },
    forgetUploadIntent: on(assets.forgetUploadIntent),
    takeInterruptedUploads: on(assets.takeInterruptedUploads),
    recordAsset: on(assets.recordAsset),
    madeAsset: on(assets.madeAsset),
    forgetAssetId: on(assets.forgetAssetId),
    findSpeech: on(speech.findSpeech),
    markSpeechCreating: on(speech.markSpeechCreating),
    markSpeechDone: on(speech.markSpeechDone),
    markSpeechUncertain: on(speech.markSpeechUncertain),
    clearSpeech: on(speech.clearSpeech),
    markInterruptedSpeechUncertain: on(speech.markInterruptedSpeechUncertain),
  };
}
