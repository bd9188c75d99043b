// `reel events`: the event stream (docs/events.md) read back from the store, as JSON lines: on a
// shared PostgreSQL store, the whole fleet's. With --follow, the events recorded after, until Ctrl-C.
import { existsSync } from "node:fs";
import { parseDuration } from "../duration.js";
import { UsageError } from "../errors/usage.js";
import { readBack } from "../events/read-back.js";
import type { CliIO, Command, ParsedArgs } from "./command.js";
import { EXIT } from "./exit-codes.js";
import { openStateToRead } from "./read-state.js";
import { workplaceOf } from "./workplace.js";

export const eventsCommand: Command = {
  name: "events",
  usage: `Usage: reel events [--follow] [--since TIME] [--only GLOB]... [--state FILE | --store URL]

Prints the events the state recorded, oldest first, one JSON object per line, as run and watch
--events FILE write them (schemas/events.schema.json). Nothing is sent to the service.

Options:
  --follow           go on printing events as they are recorded, until Ctrl-C
  --since TIME       only events recorded since TIME: an ISO 8601 date or time
                     (2025-06-01, 2025-06-01T12:00:00Z) or a duration ago (90m, 2h, 3d)
  --only GLOB        only events whose type (job.failed, job.*) or job (manifest/id, as run
                     --only takes it) matches (repeatable)
  --store URL        the shared store on PostgreSQL (env REEL_STORE): every runner's events
  --state FILE       state file (env REEL_STATE; default: the project's, as run finds it)

The state keeps events for 30 days (older ones are deleted as a run or watch starts).

Exit codes: 0, 2 bad options or a state that cannot be read.`,
  options: {
    follow: { type: "boolean" },
    since: { type: "string" },
    only: { type: "string", multiple: true },
    state: { type: "string" },
    store: { type: "string" },
  },
  run: runEvents,
};

/** --since: a duration ago, or an ISO 8601 date or time. */
export function sinceOf(text: string, now: number): number {
  const ago = parseDuration(text);
  if (ago !== undefined) return now - ago;
  const at = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(at)) {
    throw new UsageError(
      `expected --since to be an ISO 8601 date or time (2025-06-01T12:00:00Z) or a duration ago (2h), got '${text}'`,
    );
  }
  return at;
}

async function runEvents(args: ParsedArgs, io: CliIO): Promise<number> {
  if (args.positionals.length > 0) throw new UsageError("reel events takes no PATH; give --state or --store");
  const place = workplaceOf([], args, io);
  const since = typeof args.values.since === "string" ? sinceOf(args.values.since, Date.now()) : undefined;
  const only = ((args.values.only as string[] | undefined) ?? []).filter((g) => g !== "");
  if (place.storeUrl === undefined && !existsSync(place.statePath)) {
    if (args.values.follow !== true) return EXIT.ok; // nothing has run yet: no events
    throw new UsageError(`no state file at ${place.statePath}: nothing has run there yet`);
  }
  const store = await openStateToRead(place.statePath, undefined, place.storeUrl);
  try {
    await readBack(
      store,
      {
        ...(since !== undefined && { since }),
        only,
        follow: args.values.follow === true,
        signal: io.signal,
      },
      (events) => {
        if (events.length === 0) return;
        io.stdout.write(events.map((event) => `${JSON.stringify(event)}\n`).join(""));
      },
    );
  } finally {
    await store.close();
  }
  return EXIT.ok;
}
