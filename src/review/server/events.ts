// Live updates: while a page listens, the server asks the store each second for its change mark (a
// few aggregates, ReviewRecords.changeMark), reads the takes only when it moved, and sends each page
// (after a snapshot of every take when it connects) the takes that changed (a new video, a decision made elsewhere, a retake sent) as server-sent
// events. Nothing is read while no page listens: an idle server costs nothing, and a page open on
// takes that do not change costs next to nothing.
import type { ServerResponse } from "node:http";
import type { TakeView } from "./takes-view.js";

export const POLL_MS = 1000;

export class TakeEvents {
  private readonly clients = new Set<ServerResponse>();
  private last = new Map<string, string>();
  private lastMark: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private reading = false;

  constructor(
    private readonly read: () => Promise<TakeView[]>,
    private readonly mark: () => Promise<string>,
  ) {}

  /**
   * Keeps `res` open as an event stream until the page goes. The stream begins with a snapshot of
   * every take as the server last told its pages (the baseline the changes that follow are taken
   * from), so a page, and a page that reconnects, holds exactly what the next change is applied to:
   * a decision made elsewhere between the page's load and its stream's start is never lost.
   */
  async listen(res: ServerResponse): Promise<void> {
    if (this.clients.size === 0) {
      // The mark before the read: a write between the two moves it, and the next poll reads again.
      const mark = await this.mark();
      const takes = await this.read();
      // Another page may have begun listening while this one read: the baseline it was sent stays.
      if (this.clients.size === 0) {
        this.lastMark = mark;
        this.last = new Map(takes.map((t) => [t.job, JSON.stringify(t)]));
      }
    }
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-store",
      connection: "keep-alive",
    });
    res.write("retry: 1000\n\n");
    res.write(`event: snapshot\ndata: {"takes":[${[...this.last.values()].join(",")}]}\n\n`);
    this.clients.add(res);
    res.on("close", () => {
      this.clients.delete(res);
      if (this.clients.size === 0) this.stop();
    });
    this.timer ??= setInterval(() => void this.poll(), POLL_MS);
  }

  /** Reads now and sends what changed: after the page's own writes, so every page sees them at once. */
  async poll(): Promise<void> {
    if (this.reading || this.clients.size === 0) return;
    this.reading = true;
    try {
      const mark = await this.mark();
      if (mark === this.lastMark) return;
      const now = new Map((await this.read()).map((t) => [t.job, JSON.stringify(t)]));
      this.lastMark = mark;
      const changed = [...now].filter(([job, json]) => this.last.get(job) !== json).map(([, json]) => json);
      const gone = [...this.last.keys()].filter((job) => !now.has(job));
      this.last = now;
      if (changed.length === 0 && gone.length === 0) return;
      const data = `{"takes":[${changed.join(",")}],"gone":${JSON.stringify(gone)}}`;
      for (const client of this.clients) client.write(`event: takes\ndata: ${data}\n\n`);
    } catch {
      // A store briefly unreachable: the next poll tries again.
    } finally {
      this.reading = false;
    }
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  close(): void {
    this.stop();
    for (const client of this.clients) client.end();
    this.clients.clear();
  }
}
