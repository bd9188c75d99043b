// Uploaded assets and the intents of uploads, scoped by service.
import { ClaimLostError } from "../../../errors/state.js";
import { type SqlContext, sql } from "./context.js";

export function findAsset(c: SqlContext, sha256: string): string | undefined {
  const row = sql(c, "SELECT asset_id FROM assets WHERE service_id = ? AND sha256 = ?").get(
    c.serviceId,
    sha256,
  ) as { asset_id: string } | undefined;
  return row?.asset_id;
}

/** `own`: the upload intents this store wrote; one found that it did not write is another process's. */
export function markUploading(c: SqlContext, own: Set<string>, sha256: string): void {
  c.turn.write(() => {
    const changed = sql(
      c,
      "INSERT INTO upload_intents (service_id, sha256, started_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
    ).run(c.serviceId, sha256, c.now()).changes;
    if (changed === 0 && !own.has(sha256)) {
      throw new ClaimLostError(
        `the file of sha256 ${sha256.slice(0, 12)} is being uploaded by another process using this state file; not uploaded twice`,
      );
    }
    own.add(sha256);
  });
}

export function forgetUploadIntent(c: SqlContext, sha256: string): void {
  c.turn.writeStatement(() => {
    sql(c, "DELETE FROM upload_intents WHERE service_id = ? AND sha256 = ?").run(c.serviceId, sha256);
  });
}

export function takeInterruptedUploads(c: SqlContext): number {
  return c.turn.writeStatement(() => {
    const n = sql(c, "DELETE FROM upload_intents WHERE service_id = ?").run(c.serviceId).changes;
    if (n > 0) c.turn.event(null, "uploads-interrupted", String(n));
    return n;
  });
}

export function recordAsset(c: SqlContext, sha256: string, assetId: string, size: number): void {
  c.turn.write(() => {
    sql(c, "DELETE FROM upload_intents WHERE service_id = ? AND sha256 = ?").run(c.serviceId, sha256);
    sql(
      c,
      `INSERT INTO assets (service_id, sha256, asset_id, size, uploaded_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (service_id, sha256) DO UPDATE SET asset_id = excluded.asset_id, uploaded_at = excluded.uploaded_at`,
    ).run(c.serviceId, sha256, assetId, size, c.now());
  });
}

/** Of the assets table and the speech table. */
export function madeAsset(c: SqlContext, assetId: string): boolean {
  return (
    sql(
      c,
      "SELECT 1 FROM assets WHERE service_id = ? AND asset_id = ? UNION ALL SELECT 1 FROM speech WHERE service_id = ? AND asset_id = ? LIMIT 1",
    ).get(c.serviceId, assetId, c.serviceId, assetId) !== undefined
  );
}

/** From the assets table and the speech table. */
export function forgetAssetId(c: SqlContext, assetId: string): void {
  c.turn.write(() => {
    sql(c, "DELETE FROM assets WHERE service_id = ? AND asset_id = ?").run(c.serviceId, assetId);
    sql(c, "DELETE FROM speech WHERE service_id = ? AND asset_id = ?").run(c.serviceId, assetId);
  });
}
