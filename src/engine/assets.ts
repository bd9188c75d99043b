// Turns the asset references of job specs into service asset ids: each distinct file content is
// uploaded once per service (across names, manifests and runs, keyed by sha256 in the state file),
// each remote source fetched once, each (voice, text) made into speech once. Concurrent requests for
// the same content share one in-flight promise. The parts: upload.ts, remote-fetch.ts, speech.ts,
// over the context of asset-context.ts.
import type { Reservation } from "../budget/index.js";
import { BACKOFF, backoffDelay } from "../backoff.js";
import { SOLO_INTENTS } from "../fleet/index.js";
import type { AssetRef, SpeechRef } from "../manifest/index.js";
import type { Id } from "../service-contract/api-types.js";
import type { AssetContext, AssetResolverOptions } from "./asset-context.js";
import { silentProgress } from "./progress.js";
import { fetchRemote } from "./remote-fetch.js";
import { makeSpeech } from "./speech.js";
import { makeStoppableSleep } from "./stoppable-sleep.js";
import { uploadFile } from "./upload.js";

export { type AssetResolverOptions, speechAsset } from "./asset-context.js";

export interface AssetResolver {
  /**
   * `reservation`: a capped run's hold of the job asking, which pays for speech made for it. `job`:
   * its key, which the progress events of an upload or speech it starts name.
   */
  resolve(ref: AssetRef | SpeechRef, reservation?: Reservation, job?: string): Promise<Id>;
  /**
   * The id reel has on record for `ref` (a file or address it uploaded, speech it made), as a
   * submission would use it now; undefined for an `{asset: N}` of the manifest, or none yet.
   */
  knownId(ref: AssetRef | SpeechRef): Promise<Id | undefined>;
  /** Forget an asset id the service lost, so the next resolve uploads again. */
  forget(assetId: Id): Promise<void>;
}

export function makeAssetResolver(options: AssetResolverOptions): AssetResolver {
  const { store, signal } = options;
  const inFlight = new Map<string, Promise<Id>>();
  const sleep = makeStoppableSleep(signal);
  const intents = options.intents ?? SOLO_INTENTS;
  const ac: AssetContext = {
    options,
    client: options.client,
    store,
    queue: options.queue,
    signal,
    progress: options.progress ?? silentProgress,
    intents,
    once(key, work) {
      let promise = inFlight.get(key);
      if (!promise) {
        promise = work().finally(() => inFlight.delete(key));
        inFlight.set(key, promise);
      }
      return promise;
    },
    async waitForOtherRunner(turn) {
      await sleep(backoffDelay(BACKOFF.otherRunner, turn));
      if (signal.aborted) throw signal.reason;
      await intents.takeOverSilent();
    },
  };

  return {
    async resolve(ref, reservation, job) {
      switch (ref.kind) {
        case "asset":
          return ref.id;
        case "file":
          return uploadFile(ac, { ...ref, source: ref.path, named: ref.path }, job);
        case "url": {
          const fetched = await ac.once(`url:${ref.url}`, async () => {
            const remote = await fetchRemote(ac, ref.url, ref.use);
            // Uploaded from the cache, checked against the hash of the bytes fetched and judged.
            return uploadFile(
              ac,
              {
                ...remote,
                source: `the copy of ${ref.url} kept in ${remote.path}`,
                named: ref.url,
              },
              job,
            );
          });
          return fetched;
        }
        case "speech":
          return makeSpeech(ac, ref, reservation, job);
      }
    },
    async knownId(ref) {
      switch (ref.kind) {
        case "asset":
          return undefined;
        case "file":
          return store.findAsset(ref.sha256);
        case "url": {
          const fetched = await store.findRemote(ref.url);
          return fetched && store.findAsset(fetched.sha256);
        }
        case "speech": {
          const row = await store.findSpeech(ref.voiceId, ref.text);
          return row?.state === "done" ? (row.asset_id ?? undefined) : undefined;
        }
      }
    },
    forget(assetId) {
      return store.forgetAssetId(assetId);
    },
  };
}
