// Speech made by the service, and the intents of speech calls (costed), scoped by service. Mirrors
// src/state/sql/speech.ts.
import { ClaimLostError } from "../../errors.js";
import type { SpeechRow } from "../../job-store.js";
import type { PgContext } from "./context.js";

export async function findSpeech(
  c: PgContext,
  voiceId: string,
  text: string,
): Promise<SpeechRow | undefined> {
  const { rows } = await c.pool.query<SpeechRow>(
    "SELECT state, asset_id, duration, error FROM speech WHERE service_id = $1 AND voice_id = $2 AND text = $3",
    [c.serviceId, voiceId, text],
  );
  return rows[0];
}

/**
 * The compare-and-set of a speech intent, in one statement: inserted where no row is, or made over
 * an `uncertain` one. ON CONFLICT locks the row it finds and checks the WHERE against its newest
 * version, so of two writers racing, the second finds `creating` and writes nothing. Committed
 * (durably) when the promise resolves.
 */
export async function markSpeechCreating(c: PgContext, voiceId: string, text: string): Promise<void> {
  const { rowCount } = await c.pool.query(
    `INSERT INTO speech (service_id, voice_id, text, state, updated_at) VALUES ($1, $2, $3, 'creating', $4)
       ON CONFLICT (service_id, voice_id, text) DO UPDATE SET state = 'creating', asset_id = NULL, error = NULL, updated_at = excluded.updated_at
       WHERE speech.state = 'uncertain'`,
    [c.serviceId, voiceId, text, c.now()],
  );
  if (rowCount !== 1) {
    throw new ClaimLostError(
      `speech for voice ${voiceId} ("${text.slice(0, 40)}") is being or was made by another process using this store; not paid for twice (rerun to use it)`,
    );
  }
}

export async function markSpeechDone(
  c: PgContext,
  voiceId: string,
  text: string,
  assetId: string,
  duration: number,
): Promise<void> {
  await c.pool.query(
    "UPDATE speech SET state = 'done', asset_id = $4, duration = $5, error = NULL, updated_at = $6 WHERE service_id = $1 AND voice_id = $2 AND text = $3",
    [c.serviceId, voiceId, text, assetId, duration, c.now()],
  );
}

export async function markSpeechUncertain(
  c: PgContext,
  voiceId: string,
  text: string,
  error: string,
): Promise<void> {
  await c.pool.query(
    "UPDATE speech SET state = 'uncertain', error = $4, updated_at = $5 WHERE service_id = $1 AND voice_id = $2 AND text = $3",
    [c.serviceId, voiceId, text, error, c.now()],
  );
}

export async function clearSpeech(c: PgContext, voiceId: string, text: string): Promise<void> {
  await c.pool.query("DELETE FROM speech WHERE service_id = $1 AND voice_id = $2 AND text = $3", [
    c.serviceId,
    voiceId,
    text,
  ]);
}

/**
 * Every `creating` speech of this service: right for one runner at its start, as SQLite does. A
 * fleet must take only those of runners whose lease ended (the next step of issue 18).
 */
export async function markInterruptedSpeechUncertain(c: PgContext): Promise<number> {
  const { rowCount } = await c.pool.query(
    "UPDATE speech SET state = 'uncertain', error = 'the run stopped while this speech was being created' WHERE service_id = $1 AND state = 'creating'",
    [c.serviceId],
  );
  return rowCount ?? 0;
}
