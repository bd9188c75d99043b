// What in a PostgreSQL store's URL is a secret, decided here once for every place that shows or
// keeps the URL: the first line of run/plan/status and --json's `store`, every message naming the
// store, the log's scrubbing, and reel.yaml's refusal. A secret is the password of `user:password@`,
// or the value of any key of the query that libpq reads as a secret or as where one is: a password,
// a password file, a client key and its passphrase, an OAuth client secret. node-postgres reads the
// query's keys as a connection string's (`?password=` logs in), so they are secrets like the first.
// Key names are matched as the driver reads them: percent-decoded, and in any case.

/**
 * The query keys of a libpq connection string whose value is a secret or the file that holds one:
 * what each is, and where it belongs rather than in a file that is committed (reel.yaml).
 */
const SECRET_KEYS: Readonly<Record<string, { readonly what: string; readonly home: string }>> = {
  password: { what: "a password", home: "give it with PGPASSWORD or ~/.pgpass" },
  passfile: { what: "a password file", home: "name it with PGPASSFILE, or keep the password in ~/.pgpass" },
  sslpassword: {
    what: "the client key's passphrase",
    home: "give the URL with it only in REEL_STORE or --store",
  },
  sslkey: { what: "the client key's file", home: "give the URL with it only in REEL_STORE or --store" },
  oauth_client_secret: {
    what: "an OAuth client secret",
    home: "give the URL with it only in REEL_STORE or --store",
  },
};

/** How a masked secret shows. */
const MASK = "***";

/** One secret of a store URL: where it sits (as the user wrote it), and its value as the driver reads it. */
export interface StoreUrlSecret {
  /** `password` for the password of `user:password@`; else the query key (lower case). */
  readonly key: string;
  /** Where it starts in the URL (its `:` or its query key), for a message that points at it. */
  readonly index: number;
  /** How it is written: `user:password@`, or its query key as written with `=` (`password=`). */
  readonly written: string;
  /** The value, decoded. */
  readonly value: string;
}

/** Whether `value` names a PostgreSQL store rather than a SQLite file. */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}

/** The parts of `url` a mask replaces: each secret, with the raw text of its value. */
interface SecretPart extends StoreUrlSecret {
  /** Where its raw value starts and ends in the URL. */
  readonly from: number;
  readonly to: number;
}

/**
 * The secrets of `url`, read from its text as a URL parser splits it (the authority ends at the
 * first `/`, `?` or `#`, the user information at its last `@`). A URL no parser accepts (a password
 * with an unencoded `/`, `?` or `#`) cannot be used, but is still shown: its user information is
 * then taken to end at its last `@`, so that no part of such a password shows.
 */
function secretParts(url: string): SecretPart[] {
  const parts: SecretPart[] = [];
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url);
  const start = scheme ? scheme[0].length : 0;
  const fragment = indexOrEnd(url, /#/, start);
  const authorityEnd = parses(url) ? indexOrEnd(url, /[/?#]/, start) : fragment;
  const at = url.lastIndexOf("@", authorityEnd - 1);
  if (at >= start) {
    const colon = url.indexOf(":", start);
    if (colon !== -1 && colon < at) {
      const value = decoded(url.slice(colon + 1, at), false);
      parts.push({
        key: "password",
        index: colon,
        written: "user:password@",
        value,
        from: colon + 1,
        to: at,
      });
    }
  }
  const query = url.indexOf("?", Math.max(start, at + 1));
  if (query !== -1 && query < fragment) {
    let from = query + 1;
    while (from <= fragment) {
      const to = indexOrEnd(url, /&/, from, fragment);
      const pair = url.slice(from, to);
      const eq = pair.indexOf("=");
      const key = decoded(eq === -1 ? pair : pair.slice(0, eq), true).toLowerCase();
      if (Object.hasOwn(SECRET_KEYS, key)) {
        const valueFrom = eq === -1 ? to : from + eq + 1;
        const written = `${eq === -1 ? pair : pair.slice(0, eq)}=`;
        const value = decoded(url.slice(valueFrom, to), true);
        parts.push({ key, index: from, written, value, from: valueFrom, to });
      }
      from = to + 1;
    }
  }
  return parts;
}

function parses(url: string): boolean {
  try {
    new URL(url);
    return true;
  } catch {
    return false;
  }
}

/** The secrets of `url` (see above), in the order they appear; a key without a value holds none. */
export function storeUrlSecrets(url: string): StoreUrlSecret[] {
  return secretParts(url).flatMap(({ key, index, written, value }) =>
    value === "" ? [] : [{ key, index, written, value }],
  );
}

/** What `secret` is, and where it belongs rather than in a file that is committed. */
export function secretAdvice(secret: StoreUrlSecret): { readonly what: string; readonly home: string } {
  return SECRET_KEYS[secret.key]!;
}

/** `url` with every secret's value masked, for every message, output and log line. */
export function redactedUrl(url: string): string {
  let out = url;
  // From the last, so that the earlier parts' places still hold.
  for (const part of secretParts(url).reverse()) {
    if (part.from === part.to) continue;
    out = out.slice(0, part.from) + MASK + out.slice(part.to);
  }
  return out;
}

/** `text` with every secret of `url` taken out (a driver's message could quote one). */
export function scrubStoreSecrets(text: string, url: string): string {
  let out = text;
  for (const value of storeSecretValues(url)) out = out.split(value).join(MASK);
  return out;
}

/** The values a log must never hold for the store `url`: its secrets, as written and as decoded. */
export function storeSecretValues(url: string | undefined): string[] {
  if (url === undefined) return [];
  const values = new Set<string>();
  for (const part of secretParts(url)) {
    values.add(part.value);
    values.add(url.slice(part.from, part.to));
  }
  values.delete("");
  return [...values];
}

function indexOrEnd(text: string, pattern: RegExp, from: number, end = text.length): number {
  const found = text.slice(from, end).search(pattern);
  return found === -1 ? end : from + found;
}

/** A URL component decoded as the driver decodes it (`+` a space in a query); as written if malformed. */
function decoded(raw: string, query: boolean): string {
  try {
    return decodeURIComponent(query ? raw.replace(/\+/g, " ") : raw);
  } catch {
    return raw;
  }
}
