// The HTTP transport of a session: one undici Agent (a pool of keep-alive connections per origin).
// Made once by whoever owns the session (the CLI's connectService), handed to the client and, through
// the engine's options, to downloads; closed once, by its maker. Library code makes none of its own
// but the client's fallback, so tests and proxies can inject theirs.
import { Agent } from "../undici-parts.js";
import { DEFAULTS } from "../defaults.js";

export interface TransportOptions {
  /** @defaultValue DEFAULTS.timeouts (connectMs, headersMs, bodyMs are the Agent's; callMs is the client's) */
  readonly timeouts?: Partial<{
    readonly connectMs: number;
    readonly headersMs: number;
    readonly bodyMs: number;
  }>;
  /** Keep-alive connections per origin. @defaultValue DEFAULTS.connections */
  readonly connections?: number;
}

/**
 * An Agent of this undici, never the process's global dispatcher: that one may belong to an older
 * undici (Node's own, set up by any early use of fetch, or a library's), whose dispatch API refuses
 * the handlers of the client's exchange and of downloads ("invalid onError method").
 */
export function makeDispatcher(options: TransportOptions = {}): Agent {
  const timeouts = { ...DEFAULTS.timeouts, ...options.timeouts };
  return new Agent({
    connect: { timeout: timeouts.connectMs },
    headersTimeout: timeouts.headersMs,
    bodyTimeout: timeouts.bodyMs,
    connections: options.connections ?? DEFAULTS.connections,
    keepAliveTimeout: DEFAULTS.keepAliveMs,
  });
}
