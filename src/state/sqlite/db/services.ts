// The services table: every row of the state file is scoped by the service it was made on, since
// asset and task ids mean nothing on another.
import type Database from "better-sqlite3";
import { canonicalBaseUrl } from "../../../service-contract/base-url.js";
import { schemaVersion } from "../../../sqlite/migrate.js";
import type { ExclusiveAddress } from "../../service-address.js";
import { type AddressInUse, AddressInUseError } from "../../../errors/state.js";

/**
 * The row id of the service at `baseUrl`, created if new. With `exclusive`, refused
 * (AddressInUseError) while another address has jobs being made (see service-address.ts): read and
 * written in one transaction, under the state file's lock.
 */
export function ensureService(db: Database.Database, baseUrl: string, exclusive?: ExclusiveAddress): number {
  return db
    .transaction(() => {
      if (exclusive) {
        const others = addressesInUse(db, baseUrl, exclusive);
        if (others.length > 0) throw new AddressInUseError("state file", canonicalBaseUrl(baseUrl), others);
      }
      const known = findService(db, baseUrl);
      if (known !== undefined) return known;
      db.prepare("INSERT INTO services (base_url) VALUES (?)").run(baseUrl);
      return findService(db, baseUrl)!;
    })
    .immediate();
}

/** The other addresses (not `baseUrl`'s, nor free) with jobs being submitted or made. */
function addressesInUse(db: Database.Database, baseUrl: string, exclusive: ExclusiveAddress): AddressInUse[] {
  const here = canonicalBaseUrl(baseUrl);
  const free = new Set(exclusive.free.map(canonicalBaseUrl));
  const rows = db
    .prepare(
      `SELECT services.base_url, count(*) FROM jobs JOIN services ON services.id = jobs.service_id
         WHERE jobs.state IN ('submitting', 'submitted') GROUP BY services.id ORDER BY services.id`,
    )
    .raw()
    .all() as [string, number][];
  return rows
    .map(([url, n]) => ({ baseUrl: canonicalBaseUrl(url), liveRunners: 0, unfinishedJobs: n }))
    .filter((o) => o.baseUrl !== here && !free.has(o.baseUrl));
}

/**
 * The row of this service. Rows are matched by canonical URL, so that a row written by an older
 * reel with another spelling of the address (`HTTPS://Api.example.com/`) is still this service's.
 */
export function findService(db: Database.Database, baseUrl: string): number | undefined {
  if (schemaVersion(db) === 0) return undefined;
  const wanted = canonicalBaseUrl(baseUrl);
  const rows = db.prepare("SELECT id, base_url FROM services ORDER BY id").all() as {
    id: number;
    base_url: string;
  }[];
  return (
    rows.find((row) => row.base_url === baseUrl) ??
    rows.find((row) => canonicalBaseUrl(row.base_url) === wanted)
  )?.id;
}

/** The base URL of the service whose jobs changed last, if any. */
export function lastService(db: Database.Database): string | undefined {
  try {
    const row = db
      .prepare(
        "SELECT services.base_url FROM jobs JOIN services ON services.id = jobs.service_id ORDER BY jobs.updated_at DESC LIMIT 1",
      )
      .get() as { base_url: string } | undefined;
    return row?.base_url;
  } catch {
    return undefined; // a file with no tables yet
  }
}
