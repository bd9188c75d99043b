// Speech: each (voice, text) made into an audio asset once, its intent recorded (and counted
// against a capped run's budget) before the costed call leaves; a call whose outcome is unknown
// leaves the speech uncertain, never made again by itself.
import type { Reservation } from "../budget/index.js";
import { BudgetStoppedError } from "../errors/budget.js";
import { classify } from "../client/index.js";
import { OutcomeUnknownError } from "../errors/service.js";
import type { SpeechRef } from "../manifest/index.js";
import type { Id } from "../service-contract/api-types.js";
import { BudgetReachedError } from "../state/named-budget.js";
import { type AssetContext, speechAsset } from "./asset-context.js";
import { SpeechUncertainError } from "../errors/engine.js";

export async function makeSpeech(
  ac: AssetContext,
  ref: SpeechRef,
  reservation: Reservation | undefined,
  job: string | undefined,
): Promise<Id> {
  const { store, intents, options } = ac;
  return ac.once(`speech:${ref.voiceId}:${ref.text}`, async () => {
    for (let turn = 0; ; turn++) {
      const row = await store.findSpeech(ref.voiceId, ref.text);
      if (row?.state === "done" && row.asset_id) return row.asset_id;
      // Another runner's speech call under way (a gone runner's becomes uncertain meanwhile).
      if (row && intents.speechUnderWay(row)) {
        await ac.waitForOtherRunner(turn);
        continue;
      }
      if ((row?.state === "uncertain" || row?.state === "creating") && !options.resubmitUncertain) {
        throw new SpeechUncertainError(ref.voiceId, ref.text);
      }
      try {
        return await speakNew(ac, ref, reservation, job);
      } catch (error) {
        if (!intents.otherRunnerWon(error)) throw error;
      }
      await ac.waitForOtherRunner(turn);
    }
  });
}

/** Makes speech the store has none of (the caller holds its key: see `once`). */
async function speakNew(
  ac: AssetContext,
  ref: SpeechRef,
  reservation: Reservation | undefined,
  job: string | undefined,
): Promise<Id> {
  const { store, queue, progress, client, signal, options } = ac;
  const asset = speechAsset(ref.voiceId, ref.text);
  return queue.add(async () => {
    if (signal.aborted) throw signal.reason;
    // A capped run counts the call first: past the cap, it is not made (see src/budget).
    const { budget } = options;
    const cost = budget?.speechCost();
    if (
      budget &&
      !reservation?.payFromHold(cost!) &&
      !budget.takeForAdmitted(`the speech of voice ${ref.voiceId}`, cost!)
    )
      throw new BudgetStoppedError(budget.stopped!);
    /** The call was not made after all: its count given back. */
    const refund = async (): Promise<void> => {
      if (!budget) return;
      budget.giveBack(cost!);
      await store.refundSpeech(budget.session.id, ref.voiceId, ref.text);
    };
    try {
      await store.markSpeechCreating(ref.voiceId, ref.text, budget?.speechCharge());
    } catch (error) {
      budget?.giveBack(cost!); // no intent, so no charge was written
      // The named budget had no room for the call: the budget stops as at its own cap.
      if (budget && error instanceof BudgetReachedError) {
        budget.reachedShared(`the speech of voice ${ref.voiceId}`, error);
        throw new BudgetStoppedError(budget.stopped!);
      }
      throw error;
    }
    progress.event({ stage: "speaking", asset, detail: `voice ${ref.voiceId}`, key: job });
    if (signal.aborted) {
      // Stopped while the intent reached the disk: nothing was sent, take the intent back.
      await store.clearSpeech(ref.voiceId, ref.text);
      await refund();
      throw signal.reason;
    }
    try {
      const audio = await client.createSpeech(
        { voiceId: ref.voiceId, text: ref.text },
        { signal: options.costedSignal },
      );
      await store.markSpeechDone(ref.voiceId, ref.text, audio.id, audio.duration);
      options.onSpeech?.(ref.voiceId, ref.text);
      return audio.id;
    } catch (error) {
      progress.event({ stage: "speech-ended", asset });
      if (error instanceof OutcomeUnknownError)
        await store.markSpeechUncertain(ref.voiceId, ref.text, error.message);
      // A definite refusal (a 401 that stopped the run, say) created nothing, stopped or not:
      // left as "creating", the next run would take it for a speech perhaps paid for.
      else if (!signal.aborted || !classify(error, { kind: "costed" }).mayHaveTakenEffect) {
        await store.clearSpeech(ref.voiceId, ref.text);
        await refund();
      }
      throw error;
    }
  });
}
