// The `rows:` CSVs of a watched folder's manifests: the folder's watcher skips every file that is not
// a manifest, and a CSV may lie outside the folder (anywhere the read rule allows), so each CSV a
// manifest read is watched by itself, and a change to it (settled as a manifest's change is) reads
// again every manifest that uses it.
import { watch, type FSWatcher } from "chokidar";

export class RowsFiles {
  private readonly watcher: FSWatcher;
  /** Manifest file -> the CSVs it read. */
  private readonly used = new Map<string, ReadonlySet<string>>();
  /** Once closed, a manifest read late (the watch stopping) watches nothing: chokidar's add reopens. */
  private closed = false;

  constructor(settleMs: number, onChange: (manifests: readonly string[]) => void) {
    this.watcher = watch([], {
      ignoreInitial: true,
      awaitWriteFinish: { stabilityThreshold: settleMs, pollInterval: 50 },
    });
    // A CSV replaced by a save (written aside, then renamed over it) comes as unlink and add.
    const changed = (csv: string): void => {
      if (!this.closed) onChange(this.usersOf(csv));
    };
    this.watcher.on("change", changed);
    this.watcher.on("add", changed);
    this.watcher.on("unlink", changed);
  }

  /** Records the CSVs `manifest` read this time (none: it was deleted). */
  set(manifest: string, csvs: readonly string[]): void {
    if (this.closed) return;
    const before = this.used.get(manifest) ?? new Set<string>();
    if (csvs.length === 0) this.used.delete(manifest);
    else this.used.set(manifest, new Set(csvs));
    const added = csvs.filter((csv) => !before.has(csv) && this.usersOf(csv).length === 1);
    const dropped = [...before].filter((csv) => this.usersOf(csv).length === 0);
    if (added.length > 0) this.watcher.add(added);
    if (dropped.length > 0) this.watcher.unwatch(dropped);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.watcher.close();
  }

  private usersOf(csv: string): string[] {
    return [...this.used].flatMap(([manifest, csvs]) => (csvs.has(csv) ? [manifest] : []));
  }
}
