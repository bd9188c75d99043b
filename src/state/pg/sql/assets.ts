// Uploaded assets and the intents of uploads, scoped by service. Mirrors src/state/sqlite/sql/assets.ts.
import { ClaimLostError } from "../../../errors/state.js";
import type { PgContext } from "./context.js";
import type { FleetContext } from "./fleet.js";

export async function findAsset(c: PgContext, sha256: string): Promise<string | undefined> {
  const { rows } = await c.pool.query<{ asset_id: string }>(
    "SELECT asset_id FROM assets WHERE service_id = $1 AND sha256 = $2",
    [c.serviceId, sha256],
  );
  return rows[0]?.asset_id;
}

/**
 * The intent of an upload: inserted where none is and the content has no asset yet, or nothing. Of
 * two writers inserting at once, the second waits on the first's key and inserts nothing. `own`: the
 * intents this store wrote; one found that it did not write is another runner's (a takeover drops
 * those of a runner gone: fleet.ts). Content another runner uploaded since the caller looked it up
 * (its intent gone with its asset recorded, in one statement) is refused the same way: the caller
 * waits, then finds the asset.
 */
export async function markUploading(c: FleetContext, own: Set<string>, sha256: string): Promise<void> {
  // An intent of this very runner is found as made (not another's): the same intent tried again
  // after its connection broke (pg/outage.ts), whose first try may have committed.
  const { rows } = await c.pool.query<{ made: boolean; inserted: boolean }>(
    `WITH made AS (SELECT 1 FROM assets WHERE service_id = $1 AND sha256 = $2),
       inserted AS (
         INSERT INTO upload_intents (service_id, sha256, started_at, runner_id)
           SELECT $1, $2, $3, $4 WHERE NOT EXISTS (SELECT 1 FROM made)
           ON CONFLICT (service_id, sha256) DO UPDATE SET started_at = upload_intents.started_at
             WHERE upload_intents.runner_id = excluded.runner_id
           RETURNING 1)
     SELECT EXISTS (SELECT 1 FROM made) AS made, EXISTS (SELECT 1 FROM inserted) AS inserted`,
    [c.serviceId, sha256, c.now(), c.runnerId],
  );
  const { made, inserted } = rows[0]!;
  if (made || (!inserted && !own.has(sha256))) throw uploadedElsewhere(sha256);
  // READ COMMITTED: the statement above read `assets` as of its start, but its insert may have
  // waited for another runner's recordAsset (its intent deleted, its asset inserted, committed
  // together) and gone through once that intent was gone. A statement of its own sees that asset.
  if (inserted && (await findAsset(c, sha256)) !== undefined) {
    await c.pool.query(
      "DELETE FROM upload_intents WHERE service_id = $1 AND sha256 = $2 AND runner_id = $3",
      [c.serviceId, sha256, c.runnerId],
    );
    throw uploadedElsewhere(sha256);
  }
  own.add(sha256);
}

function uploadedElsewhere(sha256: string): ClaimLostError {
  return new ClaimLostError(
    `the file of sha256 ${sha256.slice(0, 12)} is being or was uploaded by another process using this store; not uploaded twice`,
  );
}

/** This runner's own intent only: another runner's is its own to end (or a takeover's). */
export async function forgetUploadIntent(c: FleetContext, sha256: string): Promise<void> {
  await c.pool.query("DELETE FROM upload_intents WHERE service_id = $1 AND sha256 = $2 AND runner_id = $3", [
    c.serviceId,
    sha256,
    c.runnerId,
  ]);
}

/** The asset, and its intent gone, in one statement. */
export async function recordAsset(
  c: PgContext,
  sha256: string,
  assetId: string,
  size: number,
): Promise<void> {
  await c.pool.query(
    `WITH done AS (DELETE FROM upload_intents WHERE service_id = $1 AND sha256 = $2)
     INSERT INTO assets (service_id, sha256, asset_id, size, uploaded_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (service_id, sha256) DO UPDATE SET asset_id = excluded.asset_id, uploaded_at = excluded.uploaded_at`,
    [c.serviceId, sha256, assetId, size, c.now()],
  );
}

/** Of the assets table and the speech table. */
export async function madeAsset(c: PgContext, assetId: string): Promise<boolean> {
  const { rowCount } = await c.pool.query(
    "SELECT 1 FROM assets WHERE service_id = $1 AND asset_id = $2 UNION ALL SELECT 1 FROM speech WHERE service_id = $1 AND asset_id = $2 LIMIT 1",
    [c.serviceId, assetId],
  );
  return rowCount !== 0;
}

/** From the assets table and the speech table, in one statement. */
export async function forgetAssetId(c: PgContext, assetId: string): Promise<void> {
  await c.pool.query(
    `WITH gone AS (DELETE FROM assets WHERE service_id = $1 AND asset_id = $2)
     DELETE FROM speech WHERE service_id = $1 AND asset_id = $2`,
    [c.serviceId, assetId],
  );
}
