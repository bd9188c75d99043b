// The state files open for writing, apart from the store itself so that the CLI can flush them at
// its exit without loading SQLite for the commands that never open one (`reel --version`).

interface Flushable {
  flushSync(): void;
}

const openStores = new Set<Flushable>();

export function addOpenStore(store: Flushable): void {
  openStores.add(store);
}

export function removeOpenStore(store: Flushable): void {
  openStores.delete(store);
}

/**
 * Commits the last turn of every store still open. The CLI calls it at the process's exit (see
 * cli/main.ts); importing this module registers nothing.
 */
export function flushOpenStores(): void {
  for (const store of openStores) store.flushSync();
}
