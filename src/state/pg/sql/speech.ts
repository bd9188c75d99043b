// Speech made by the service, scoped by service. Mirrors src/state/sqlite/sql/speech.ts; the intent of a
// speech call (costed) is fenced, in fleet.ts (startSpeech).
import type { SpeechRow } from "../../job-store.js";
import type { PgContext } from "./context.js";
import type { FleetContext } from "./fleet.js";

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

/** This runner's own intent only (never a speech made, nor another runner's call under way). */
export async function clearSpeech(c: FleetContext, voiceId: string, text: string): Promise<void> {
  await c.pool.query(
    "DELETE FROM speech WHERE service_id = $1 AND voice_id = $2 AND text = $3 AND state <> 'done' AND runner_id = $4",
    [c.serviceId, voiceId, text, c.runnerId],
  );
}
