// A slot of the account freed by one runner and not taken again by it, told to the others at once
// (LISTEN/NOTIFY) rather than found by their next timed claim, 250 to 750 ms later. Each writer
// listens on a connection of its own (a LISTEN holds its session; the writer's one connection is
// busy with its statements, the heartbeat's must stay free for the beats). A notice is only a hint:
// one lost (the connection broken, the listener reconnecting) costs a wait until the next timed
// claim (fleet/slot-line.ts), never a wrong claim: the claim itself checks the bound.
// Each notice of a freed slot has an id; a runner that takes it says so ("took", on this session),
// so that the other runners with jobs waiting let it be instead of each claiming a slot that one
// of them will have (fleet/slot-line.ts pauses before taking one).
// A runner alone on its service has nobody to tell: it tells only once it has heard of another
// (each says "hello" when it starts listening, and answers another's "hello" with "here"), so a
// runner alone sends no notice at all.
import type pg from "pg";
import type { SlotOffer, SlotTold } from "../contract/fleet.js";
import { Client } from "./driver.js";
import { connectionSettings } from "./connect.js";
import { makeKeyedLock } from "../../keyed-lock.js";

/** The channel: one for the store, the payload names the service and the runner that sent it. */
const CHANNEL = "reel_slot_free";
/** The listening session's name in pg_stat_activity. */
export const APPLICATION_NAME = "reel slot notices";
/** How long the listener waits before connecting again after its connection broke. */
const RECONNECT_MS = 1_000;

/**
 * What a notice says: a slot freed (with the notice's id), a slot taken (the id of the notice that
 * told of it), or a runner there (starting to listen, or answering one that did).
 */
type Word = "free" | "took" | "hello" | "here";

function notify(
  on: Pick<pg.Pool, "query">,
  serviceId: number,
  runnerId: number,
  word: Word,
  id = "",
): Promise<unknown> {
  return on.query("SELECT pg_notify($1, $2)", [CHANNEL, `${serviceId} ${runnerId} ${word}${id && ` ${id}`}`]);
}

/** How long a notice's id is remembered: its slot is taken, or not, within the runners' pauses. */
const OFFER_MEMORY_MS = 1_000;

/**
 * Listens for the slots other runners of service `serviceId` free: `onFree` is called once per
 * notice not sent by runner `runnerId` itself. Connects again after a broken connection until closed.
 */
export class SlotNotices {
  private client: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly listeners: ((offer: SlotOffer) => void)[] = [];
  /** Whether another runner of the service was heard since this one listens: else nobody to tell. */
  othersHeard = false;
  /** The ids of the notices this runner sent (runner id, then a count). */
  private sent = 0;
  /**
   * The notices of freed slots lately sent or heard, by id (unique across runners: the sender's id
   * leads it): marked when another runner says it took the slot.
   */
  private readonly notices = new Map<string, { taken: boolean }>();
  /** Says on this session that this runner took the slot of notice `id`. */
  private tookNotice: (id: string) => void = () => {};

  constructor(
    private readonly url: string,
    private readonly serviceId: number,
    private readonly runnerId: number,
  ) {
    void this.connect();
  }

  /** `listener` is called for each slot another runner frees, with the offer it makes of it. */
  onFree(listener: (offer: SlotOffer) => void): void {
    this.listeners.push(listener);
  }

  /**
   * Tells the other runners that this runner freed a slot it does not use, on `on` (the writer's
   * connection: after the write that freed it), under an id of its own; what became of it is marked
   * when one of them says it takes it.
   */
  tellFree(on: Pick<pg.Pool, "query">): SlotTold {
    const id = `${this.runnerId}.${++this.sent}`;
    const told = this.remember(id);
    void notify(on, this.serviceId, this.runnerId, "free", id).catch(() => {});
    return told;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    // Named, so that pg_stat_activity tells it from the runner's other sessions.
    const client = new Client({ ...connectionSettings(this.url), application_name: APPLICATION_NAME });
    let retried = false;
    const retry = (): void => {
      if (retried) return;
      retried = true;
      if (this.client === client) this.client = undefined;
      void client.end().catch(() => {});
      if (this.closed) return;
      this.timer = setTimeout(() => void this.connect(), RECONNECT_MS);
      this.timer.unref();
    };
    // One statement at a time on the session: runners that start together greet each other at once,
    // and answers sent beside the statements still waiting made the driver print a warning (its next
    // major version refuses them).
    const session = makeKeyedLock();
    const inTurn = <T>(statement: () => Promise<T>): Promise<T> => session.run("session", statement);
    // A broken session (the server restarted) must not end the process: listened to from the start.
    client.on("error", retry);
    client.on("end", retry);
    client.on("notification", (message) => {
      const [service, runner, word, id = ""] = (message.payload ?? "").split(" ");
      if (Number(service) !== this.serviceId || Number(runner) === this.runnerId) return;
      this.othersHeard = true;
      if (word === "hello")
        void inTurn(() => notify(client, this.serviceId, this.runnerId, "here")).catch(() => {});
      if (word === "took") {
        const notice = this.notices.get(id);
        if (notice) notice.taken = true;
      }
      if (word === "free") this.offer(id);
    });
    this.tookNotice = (id) =>
      void inTurn(() => notify(client, this.serviceId, this.runnerId, "took", id)).catch(() => {});
    this.client = client;
    try {
      await client.connect();
      await inTurn(() => client.query(`LISTEN ${CHANNEL}`));
      await inTurn(() => notify(client, this.serviceId, this.runnerId, "hello"));
      if (this.closed) await client.end();
    } catch {
      retry();
    }
  }

  /** The slot of notice `id`, offered to this runner's line. */
  private offer(id: string): void {
    const state = this.remember(id);
    const offer: SlotOffer = {
      get taken() {
        return state.taken;
      },
      take: () => {
        if (id) this.tookNotice(id);
      },
    };
    for (const listener of this.listeners) listener(offer);
  }

  /** Notice `id`'s state, kept for as long as a "took" naming it may come (none without an id). */
  private remember(id: string): { taken: boolean } {
    const state = { taken: false };
    if (!id) return state;
    this.notices.set(id, state);
    setTimeout(() => this.notices.delete(id), OFFER_MEMORY_MS).unref();
    return state;
  }
}
