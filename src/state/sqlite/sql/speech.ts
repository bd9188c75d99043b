// Speech made by the service, and the intents of speech calls (costed), scoped by service.
import { ClaimLostError } from "../../../errors/state.js";
import type { SpeechCharge, SpeechRow } from "../../job-store.js";
import { chargeSpeech } from "./budget.js";
import { namedSpeechKey } from "../../ledger-rule.js";
import { noticingRefusals, spendFromBudget } from "./named-budgets.js";
import { type SqlContext, sql } from "./context.js";

export function findSpeech(c: SqlContext, voiceId: string, text: string): SpeechRow | undefined {
  return sql(
    c,
    "SELECT state, asset_id, duration, error FROM speech WHERE service_id = ? AND voice_id = ? AND text = ?",
  ).get(c.serviceId, voiceId, text) as SpeechRow | undefined;
}

/** Committed with synchronous=FULL, and awaited: the call is made only once the intent is on disk. */
export async function markSpeechCreating(
  c: SqlContext,
  voiceId: string,
  text: string,
  charge: SpeechCharge | undefined,
): Promise<void> {
  const write = noticingRefusals(c, charge ? c.turn.write.bind(c.turn) : c.turn.writeStatement.bind(c.turn));
  write(() => {
    const changed = sql(
      c,
      `INSERT INTO speech (service_id, voice_id, text, state, updated_at) VALUES (?, ?, ?, 'creating', ?)
         ON CONFLICT (service_id, voice_id, text) DO UPDATE SET state = 'creating', asset_id = NULL, error = NULL, updated_at = excluded.updated_at
         WHERE speech.state = 'uncertain'`,
    ).run(c.serviceId, voiceId, text, c.now()).changes;
    if (changed !== 1) {
      throw new ClaimLostError(
        `speech for voice ${voiceId} ("${text.slice(0, 40)}") is being or was made by another process using this state file; not paid for twice (rerun to use it)`,
      );
    }
    if (charge) chargeSpeech(c, voiceId, text, charge);
    if (charge?.named)
      spendFromBudget(c, charge.named, { speech: namedSpeechKey(c.serviceId, voiceId, text) });
  }, true);
  await c.turn.durable();
}

export function markSpeechDone(
  c: SqlContext,
  voiceId: string,
  text: string,
  assetId: string,
  duration: number,
): void {
  c.turn.writeStatement(() => {
    sql(
      c,
      "UPDATE speech SET state = 'done', asset_id = ?, duration = ?, error = NULL, updated_at = ? WHERE service_id = ? AND voice_id = ? AND text = ?",
    ).run(assetId, duration, c.now(), c.serviceId, voiceId, text);
  });
}

export function markSpeechUncertain(c: SqlContext, voiceId: string, text: string, error: string): void {
  c.turn.writeStatement(() => {
    sql(
      c,
      "UPDATE speech SET state = 'uncertain', error = ?, updated_at = ? WHERE service_id = ? AND voice_id = ? AND text = ?",
    ).run(error, c.now(), c.serviceId, voiceId, text);
  });
}

export function clearSpeech(c: SqlContext, voiceId: string, text: string): void {
  c.turn.writeStatement(() => {
    sql(c, "DELETE FROM speech WHERE service_id = ? AND voice_id = ? AND text = ?").run(
      c.serviceId,
      voiceId,
      text,
    );
  });
}

export function markInterruptedSpeechUncertain(c: SqlContext): number {
  return c.turn.write(
    () =>
      sql(
        c,
        "UPDATE speech SET state = 'uncertain', error = 'the run stopped while this speech was being created' WHERE service_id = ? AND state = 'creating'",
      ).run(c.serviceId).changes,
  );
}
