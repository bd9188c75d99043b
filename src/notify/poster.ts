// One notification target: its messages posted in order, one at a time, off the run's path (the
// caller only queues), each signed when a secret is set, tried again with backoff when the receiver
// does not take it. A receiver that fails or hangs costs the run nothing but the queue it holds
// (bounded); at exit it is given at most a moment (see drain).
import { createHmac } from "node:crypto";
import { Agent, request } from "../undici-parts.js";
import { BACKOFF, backoffDelay } from "../backoff.js";
import { DEFAULTS } from "../defaults.js";
import { isPrivateAddress, makeSourceAgent } from "../engine/source-address.js";
import { PrivateSourceError } from "../errors/engine.js";
import type { NotifyTarget } from "./targets.js";

/** The header's value for `body`, as GitHub signs its webhooks: sha256=<hex HMAC-SHA256>. */
export function signatureOf(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body, "utf8").digest("hex")}`;
}

export interface PosterOptions {
  /** REEL_NOTIFY_SECRET: each body signed with it (X-Reel-Signature). */
  readonly secret?: string;
  /** Said once per target: its first failure (the rest go to `log`). */
  readonly warn: (line: string) => void;
  readonly log: (line: string) => void;
}

/** Why a try failed, as the user reads it. */
class PostFailure extends Error {}

export class NotifyPoster {
  private readonly queue: string[] = [];
  private readonly agent: Agent;
  private sending = false;
  private idle: (() => void)[] = [];
  private failedOnce = false;
  private dropped = 0;
  /** Set at exit: waits are cut short, and once the deadline passes, what is under way is aborted. */
  private closing = false;
  private readonly stop = new AbortController();
  private wakeUp: (() => void) | undefined;

  constructor(
    readonly target: NotifyTarget,
    private readonly options: PosterOptions,
  ) {
    // A reel.yaml's URL is connected to only at a public address (its name looked up at each
    // connection, as for https sources), unless --allow-private-notify.
    this.agent = target.checked ? makeSourceAgent(target.url, false) : new Agent();
  }

  /** Queues `body` (already scrubbed): returns at once. */
  post(body: string): void {
    if (this.closing && this.stop.signal.aborted) return;
    if (this.queue.length >= DEFAULTS.notify.queued) {
      this.queue.shift();
      this.dropped++;
    }
    this.queue.push(body);
    if (!this.sending) void this.sendAll();
  }

  /**
   * Waits until every queued message is sent or given up, or `ms` passed; then aborts what is left,
   * and closes the connections.
   */
  async drain(ms: number): Promise<void> {
    this.closing = true;
    this.wakeUp?.();
    if (this.sending || this.queue.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => this.idle.push(resolve)),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
      ]);
      clearTimeout(timer);
    }
    this.stop.abort();
    if (this.queue.length > 0 || this.sending) {
      this.options.log(
        `notifications to ${this.target.shown}: ${this.queue.length + (this.sending ? 1 : 0)} not sent at exit`,
      );
    }
    this.queue.length = 0;
    await this.agent.destroy().catch(() => {});
  }

  private async sendAll(): Promise<void> {
    this.sending = true;
    try {
      while (this.queue.length > 0 && !this.stop.signal.aborted) {
        const body = this.queue.shift()!;
        await this.sendOne(body);
      }
    } finally {
      this.sending = false;
      for (const resolve of this.idle.splice(0)) resolve();
    }
  }

  private async sendOne(body: string): Promise<void> {
    for (let attempt = 0; attempt < DEFAULTS.notify.attempts; attempt++) {
      try {
        await this.tryOnce(body);
        if (this.dropped > 0) {
          this.options.log(
            `notifications to ${this.target.shown}: ${this.dropped} dropped (too many waiting)`,
          );
          this.dropped = 0;
        }
        return;
      } catch (error) {
        if (this.stop.signal.aborted) return;
        const reason = error instanceof Error ? error.message : String(error);
        this.failed(reason, error instanceof PrivateSourceError);
        if (error instanceof PrivateSourceError) return; // the same at every try
        // At exit, one more try at once rather than a wait.
        if (this.closing) {
          if (attempt > 0) return;
          continue;
        }
        await this.wait(backoffDelay(BACKOFF.notifyRetry, attempt));
      }
    }
  }

  private async tryOnce(body: string): Promise<void> {
    const { hostname } = new URL(this.target.url);
    // An address written in the URL is connected to without a lookup: checked here.
    if (this.target.checked && isPrivateAddress(hostname)) throw new PrivateSourceError(this.target.url);
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "user-agent": "reel",
    };
    if (this.options.secret !== undefined)
      headers["x-reel-signature"] = signatureOf(this.options.secret, body);
    let response;
    try {
      response = await request(this.target.url, {
        method: "POST",
        headers,
        body,
        dispatcher: this.agent,
        signal: AbortSignal.any([this.stop.signal, AbortSignal.timeout(DEFAULTS.notify.timeoutMs)]),
      });
    } catch (error) {
      if (error instanceof PrivateSourceError) throw error;
      const cause = (error as { cause?: unknown }).cause;
      if (cause instanceof PrivateSourceError) throw cause;
      const name = (error as { name?: string }).name;
      throw new PostFailure(
        name === "TimeoutError" || name === "AbortError"
          ? `no answer within ${DEFAULTS.notify.timeoutMs / 1000} s`
          : ((error as { code?: string }).code ?? (error as Error).message),
      );
    }
    await response.body.dump().catch(() => {});
    if (response.statusCode < 200 || response.statusCode >= 300) {
      throw new PostFailure(`HTTP ${response.statusCode}`);
    }
  }

  private failed(reason: string, refused: boolean): void {
    const line = refused
      ? `notifications to ${this.target.shown} (from ${this.target.from}) are not sent: its name leads to a loopback, link-local or private address (give --allow-private-notify to allow it)`
      : `notifications to ${this.target.shown} fail (${reason}); each is tried ${DEFAULTS.notify.attempts} times, and the target's further failures are not said here (see the log)`;
    if (this.failedOnce) {
      this.options.log(`notification to ${this.target.shown} failed: ${reason}`);
      return;
    }
    this.failedOnce = true;
    this.options.warn(line);
    this.options.log(`notification to ${this.target.shown} failed: ${reason}`);
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = undefined;
        done();
      };
    });
  }
}
