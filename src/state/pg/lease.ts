// The fleet's clock (issue 18), in one place: how often a runner says it is alive, and how long its
// silence is tolerated before it counts as gone. `reel status` shows runners by these; the leases on
// the work a runner claims (next steps) use them too.
//
// Why these numbers: a lease is six heartbeats, so a runner is never taken for lost over a few missed
// beats (a garbage-collection pause, a slow statement, a network blip, a database restart it
// reconnects from), while the work of one killed with kill -9 (or whose machine vanished) is free to
// take over within about half a minute: short beside a generation, which takes minutes. A beat is
// one small UPDATE every 5 s per runner: a hundred runners cost the database twenty a second.
// Every runner time is the database server's clock (see sql/runners.ts), so the machines' clocks
// need not agree.

/** How often a writer records that it is alive (runners.heartbeat_at). */
export const HEARTBEAT_MS = 5_000;

/** A runner whose last heartbeat is older than this, and that did not stop, is lost. */
export const LEASE_MS = 30_000;

/**
 * The runners `reel status` lists: every one heard from within this time (running, stopped or lost
 * lately), and any older one still holding jobs. Every process that ever wrote adds a row, so the
 * whole table would only grow.
 */
export const RUNNERS_SHOWN_MS = 24 * 3_600_000;
