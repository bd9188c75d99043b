// Where notifications go: --notify URL (repeatable), REEL_NOTIFY, and `notify:` in reel.yaml. A URL
// the user typed (flag, environment) is theirs and may be anything, loopback included; one from a
// reel.yaml, which may come from someone else, is held to what https sources are: a public address
// only, unless --allow-private-notify (see engine/source-address.ts).
import { lookup } from "node:dns/promises";
import { UsageError } from "../errors/usage.js";
import { isPrivateAddress } from "../engine/source-address.js";

export interface NotifyTarget {
  readonly url: string;
  /** Where it was given, as messages name it. */
  readonly from: "--notify" | "REEL_NOTIFY" | "reel.yaml";
  /** How the output names it: its origin only (a webhook's path is often its secret). */
  readonly shown: string;
  /** Held to public addresses (a reel.yaml's URL without --allow-private-notify). */
  readonly checked: boolean;
}

/** REEL_NOTIFY's URLs: separated by spaces or commas (a comma inside a URL written %2C). */
export function splitNotifyList(value: string): string[] {
  return value.split(/[\s,]+/).filter((part) => part !== "");
}

/** The origin of `url`, as the output shows a target. */
export function shownTarget(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}`;
}

/** Checks `url` (an http(s) URL with no user:password) and makes it a target. */
export function targetOf(url: string, from: NotifyTarget["from"], allowPrivate: boolean): NotifyTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`${from} takes an http:// or https:// URL, got '${url}'`);
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    throw new UsageError(`${from} takes an http:// or https:// URL, got one of ${parsed.protocol}`);
  }
  return { url, from, shown: shownTarget(url), checked: from === "reel.yaml" && !allowPrivate };
}

/**
 * Refuses a reel.yaml target whose address (written, or what its name resolves to now) is loopback,
 * link-local or private: said before anything starts. A name that does not resolve now is left to
 * the posts (its receiver may be down); each connection checks its address again.
 */
export async function checkTargetAddresses(targets: readonly NotifyTarget[]): Promise<void> {
  for (const target of targets) {
    if (!target.checked) continue;
    const host = new URL(target.url).hostname.replace(/^\[(.*)\]$/, "$1");
    const addresses = isPrivateAddress(host)
      ? [host]
      : await lookup(host, { all: true }).then(
          (found) => found.map((a) => a.address),
          () => [],
        );
    if (addresses.some(isPrivateAddress)) {
      throw new UsageError(
        `notify: in reel.yaml names ${target.shown}, a loopback, link-local or private address: a project file may come from someone else, so reel posts there only with --allow-private-notify (a URL given with --notify or REEL_NOTIFY is not checked)`,
      );
    }
  }
}
