// Where an https source may be fetched from: public addresses only, unless the user allows private
// ones (--allow-private-sources). A manifest dropped into a watched folder must not make reel fetch
// from the machine itself, its network or a cloud's metadata service (169.254.169.254), nor learn
// which local ports are open from the way a fetch fails: every refusal is one message, given before
// any connection. The address checked is the address connected to (the lookup of the connection
// itself is checked), so a name that resolves to a public address once and a private one next time
// (DNS rebinding) gains nothing.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from "node:dns";
import { BlockList, isIP } from "node:net";
import { Agent } from "../undici-parts.js";
import { PrivateSourceError } from "../errors/engine.js";

const IPV4_BLOCKED: readonly (readonly [string, number])[] = [
  ["0.0.0.0", 8], // "this network", 0.0.0.0 reaches the machine itself
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, cloud metadata services
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
];

const IPV6_BLOCKED: readonly (readonly [string, number])[] = [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["100::", 64], // discard
  ["fc00::", 7], // unique local (private)
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated, still routed by some)
  ["ff00::", 8], // multicast
];

const blocked = new BlockList();
for (const [net, prefix] of IPV4_BLOCKED) blocked.addSubnet(net, prefix, "ipv4");
for (const [net, prefix] of IPV6_BLOCKED) blocked.addSubnet(net, prefix, "ipv6");

/** The eight 16-bit groups of an IPv6 address (which isIP has accepted), a dotted IPv4 tail included. */
function ipv6Groups(ip: string): number[] {
  let text = ip.replace(/%.*$/, ""); // zone index
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)));
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/** The IPv4 address an IPv6 one carries (mapped, compatible, NAT64, 6to4), if any. */
function embeddedIpv4(groups: readonly number[]): string | undefined {
  const g = (i: number) => groups[i] ?? 0;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zerosTo = (end: number) => groups.slice(0, end).every((x) => x === 0);
  // ::a.b.c.d (compatible) and ::ffff:a.b.c.d (mapped)
  if (zerosTo(5) && (g(5) === 0 || g(5) === 0xffff)) return v4(g(6), g(7));
  if (g(0) === 0x64 && g(1) === 0xff9b && g(2) === 0 && g(3) === 0 && g(4) === 0 && g(5) === 0)
    return v4(g(6), g(7)); // NAT64
  if (g(0) === 0x2002) return v4(g(1), g(2)); // 6to4
  return undefined;
}

/** Whether `ip` (an address, not a name) is loopback, link-local, private or otherwise not public. */
export function isPrivateAddress(ip: string): boolean {
  const bare = ip.replace(/^\[(.*)\]$/, "$1");
  const family = isIP(bare);
  if (family === 4) return blocked.check(bare, "ipv4");
  if (family !== 6) return false;
  const inner = embeddedIpv4(ipv6Groups(bare));
  if (inner !== undefined && blocked.check(inner, "ipv4")) return true;
  return blocked.check(bare.replace(/%.*$/, ""), "ipv6");
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A dispatcher for fetching `url`, whose connections refuse private addresses unless `allowPrivate`.
 * The caller checks a host written as an address itself (isPrivateAddress): no lookup is made for one.
 */
export function makeSourceAgent(url: string, allowPrivate: boolean): Agent {
  if (allowPrivate) return new Agent();
  const lookup = (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true } as LookupAllOptions, (error, addresses) => {
      if (error) return callback(error, []);
      if (addresses.length === 0 || addresses.some((a) => isPrivateAddress(a.address))) {
        return callback(new PrivateSourceError(url), []);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
  return new Agent({ connect: { lookup } });
}
