// The rows a report lists, as the writers read them: an array (a watch's few), or rows read from the
// store a batch at a time on each pass (a run's end: 100,000 rows held at once were most of its peak
// memory). A source must give them again each time it is iterated (writeHtmlReport reads them twice:
// its counts come before its data). Each pass costs a query per batch and the work of every row: a
// run's end makes one (folder-reports.ts), what else it needs of the rows riding on it.
import { type JobRow, type JobStore, type VersionRef, versionKey } from "../state/job-store.js";

export type ReportRows = Iterable<JobRow> | AsyncIterable<JobRow>;

/** Rows read from the store per query: large enough that the queries cost little, small enough to hold. */
export const ROWS_PER_READ = 1_000;

/**
 * Rows that a pass may read a batch at a time (batchesOf): one step of the async machinery per
 * batch instead of one per row and per layer, which cost a 100,000-row pass 0.1 s.
 */
export interface BatchedRows extends AsyncIterable<JobRow> {
  batches(): AsyncIterable<readonly JobRow[]>;
}

/** `rows` a batch at a time: an array is one batch, batched rows give theirs, other rows one each. */
export async function* batchesOf(rows: ReportRows): AsyncGenerator<readonly JobRow[]> {
  if (Array.isArray(rows)) yield rows as readonly JobRow[];
  else if ("batches" in rows) yield* (rows as BatchedRows).batches();
  else for await (const row of rows) yield [row];
}

function batched(batches: () => AsyncIterable<readonly JobRow[]>): BatchedRows {
  return {
    batches,
    async *[Symbol.asyncIterator]() {
      for await (const batch of batches()) yield* batch;
    },
  };
}

/**
 * The rows of `versions` (given again for each pass), in their order, read from the store
 * ROWS_PER_READ at a time. A version the store does not hold is left out.
 */
export function storedRows(
  store: Pick<JobStore, "jobsOfVersions">,
  versions: () => Iterable<VersionRef>,
): BatchedRows {
  return batched(async function* () {
    let batch: VersionRef[] = [];
    for (const version of versions()) {
      batch.push(version);
      if (batch.length < ROWS_PER_READ) continue;
      yield inOrder(await store.jobsOfVersions(batch), batch);
      batch = [];
    }
    if (batch.length > 0) yield inOrder(await store.jobsOfVersions(batch), batch);
  });
}

function inOrder(rows: readonly JobRow[], batch: readonly VersionRef[]): readonly JobRow[] {
  // Mostly they come in that order already (a store reads them in the order it recorded them): no
  // map of 1,000 keys made to find that.
  if (rows.length === batch.length && rows.every((row, i) => sameVersion(row, batch[i]!))) return rows;
  const byVersion = new Map(rows.map((row) => [versionKey(row.job_key, row.spec_hash), row]));
  return batch.flatMap((version) => byVersion.get(versionKey(version.key, version.specHash)) ?? []);
}

const sameVersion = (row: JobRow, version: VersionRef): boolean =>
  row.job_key === version.key && row.spec_hash === version.specHash;

/** `rows` and then `more`, each read anew at each pass; every row through `map`. */
export function chainRows(
  rows: ReportRows,
  more: () => Promise<readonly JobRow[]>,
  map: (row: JobRow) => JobRow,
): BatchedRows {
  return batched(async function* () {
    for await (const batch of batchesOf(rows)) yield batch.map(map);
    yield (await more()).map(map);
  });
}

/**
 * `rows`, each given to `each` on the first pass only (before it goes on), and `end` called once that
 * pass has gone through them all: what needs every row once rides on a pass that reads them anyway.
 */
export function onFirstPass(
  rows: ReportRows,
  each: (row: JobRow) => void,
  end: () => void = () => {},
): BatchedRows {
  let passes = 0;
  return batched(async function* () {
    if (passes++ > 0) {
      yield* batchesOf(rows);
      return;
    }
    for await (const batch of batchesOf(rows)) {
      for (const row of batch) each(row);
      yield batch;
    }
    end();
  });
}
