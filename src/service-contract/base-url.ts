// A service's identity in the state file is its base URL: every spelling of one address must give
// the same string, or a run against `HTTPS://API.example.com/` would find none of the jobs run
// against `https://api.example.com` and pay for every one of them again.

/**
 * `scheme://host[:port][/path]` with the scheme and host in lower case, the default port dropped and
 * no trailing slash (what URL's origin gives, plus the path of a proxy prefix). Other strings (the
 * sandbox's "sandbox:local") lose trailing slashes only.
 */
export function canonicalBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return raw.replace(/\/+$/, "");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return raw.replace(/\/+$/, "");
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}
