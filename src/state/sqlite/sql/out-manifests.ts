// The manifests run into each output folder (migration 9; OutputRecords in job-store.ts).
import { type SqlContext, sql } from "./context.js";

export function recordOutManifest(c: SqlContext, outDir: string, manifest: string): void {
  c.turn.writeStatement(() => {
    sql(c, "INSERT OR IGNORE INTO out_manifests (out_dir, manifest) VALUES (?, ?)").run(outDir, manifest);
  });
}

export function outManifests(c: SqlContext, outDir: string): string[] {
  const rows = sql(c, "SELECT manifest FROM out_manifests WHERE out_dir = ? ORDER BY manifest", true).all(
    outDir,
  ) as [string][];
  return rows.map(([manifest]) => manifest);
}

export function forgetOutManifest(c: SqlContext, outDir: string, manifest: string): boolean {
  return c.turn.writeStatement(
    () =>
      sql(c, "DELETE FROM out_manifests WHERE out_dir = ? AND manifest = ?").run(outDir, manifest).changes >
      0,
  );
}
