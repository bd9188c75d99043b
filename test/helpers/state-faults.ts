// Faults of the state file that cannot be caused for real in a test, made with SQLite itself.
import Database from "better-sqlite3";

/**
 * From now on, the state file at `path` refuses to record a downloaded video the way a full disk
 * refuses a write: SQLite undoes the whole transaction (`RAISE(ROLLBACK)` in a trigger on the update
 * of markDownloaded, the one that sets a job's file). Returns a function that lifts the fault.
 */
export function failDownloadRecords(path: string): () => void {
  const db = new Database(path);
  db.exec(
    "CREATE TRIGGER full_disk BEFORE UPDATE OF file ON jobs WHEN NEW.file IS NOT NULL BEGIN SELECT RAISE(ROLLBACK, 'database or disk is full'); END",
  );
  db.close();
  return () => {
    const fixed = new Database(path);
    fixed.exec("DROP TRIGGER full_disk");
    fixed.close();
  };
}
