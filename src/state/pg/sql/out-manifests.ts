// The manifests run into each output folder: src/state/sqlite/sql/out-manifests.ts's statements, mirrored.
import type { PgContext } from "./context.js";

export async function recordOutManifest(c: PgContext, outDir: string, manifest: string): Promise<void> {
  await c.pool.query("INSERT INTO out_manifests (out_dir, manifest) VALUES ($1, $2) ON CONFLICT DO NOTHING", [
    outDir,
    manifest,
  ]);
}

export async function outManifests(c: PgContext, outDir: string): Promise<string[]> {
  const { rows } = await c.pool.query<{ manifest: string }>(
    "SELECT manifest FROM out_manifests WHERE out_dir = $1 ORDER BY manifest",
    [outDir],
  );
  return rows.map((row) => row.manifest);
}

export async function forgetOutManifest(c: PgContext, outDir: string, manifest: string): Promise<boolean> {
  const { rowCount } = await c.pool.query("DELETE FROM out_manifests WHERE out_dir = $1 AND manifest = $2", [
    outDir,
    manifest,
  ]);
  return (rowCount ?? 0) > 0;
}
