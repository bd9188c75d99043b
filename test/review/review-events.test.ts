// The review server's live events over a real SQLite state and real HTTP: while a page listens and
// nothing changes, the server asks the store for its change mark each second and reads no takes; a
// decision written by another process moves the mark, and the page gets it as an event.
import { request } from "node:http";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startReviewServer } from "../../src/review/server/server.js";
import { openReviewStore } from "../../src/state/open-job-store.js";
import { StateStore } from "../../src/state/sqlite/store.js";
import { until } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp-dir.js";

const SERVICE = "sandbox:local";
const TAKE = { manifest: "shop", seconds: 5, model: "actor-2", specJson: "{}" };

/** The review server's event stream as a page opens it (its token in the cookie): the text so far. */
function eventStream(server: { url: string; port: number }): { text(): string; close(): void } {
  const token = new URL(server.url).searchParams.get("token")!;
  let text = "";
  const req = request({
    host: "127.0.0.1",
    port: server.port,
    path: "/api/events",
    headers: { host: `127.0.0.1:${server.port}`, cookie: `reel_review=${token}` },
  });
  req.on("response", (res) => res.on("data", (d: Buffer) => (text += d.toString())));
  req.end();
  return { text: () => text, close: () => req.destroy() };
}

describe("the review server's live events", () => {
  it("reads no takes while nothing changes, and pushes a decision made elsewhere", async () => {
    const dir = await tempDir();
    const state = join(dir, "state.db");
    const writer = StateStore.open(state, { baseUrl: SERVICE });
    await writer.upsertJobs([
      { ...TAKE, key: "shop/mug~1", videoId: "mug~1", specHash: "h1" },
      { ...TAKE, key: "shop/mug~2", videoId: "mug~2", specHash: "h2" },
    ]);
    await writer.close();

    const store = await openReviewStore(state, { baseUrl: SERVICE });
    const calls = { reads: 0, marks: 0 };
    const counted: typeof store = Object.assign(Object.create(store) as typeof store, {
      listLatestJobs: () => (calls.reads++, store.listLatestJobs()),
      changeMark: () => (calls.marks++, store.changeMark()),
    });
    const server = await startReviewServer({
      store: counted,
      baseUrl: SERVICE,
      outDir: dir,
      port: 0,
      title: "t",
    });
    const stream = eventStream(server);
    try {
      await until(() => stream.text().startsWith("retry:"), "the event stream");
      const { reads, marks } = calls;
      await until(() => calls.marks >= marks + 2 || calls.reads >= reads + 2, "two polls", 5_000);
      expect(calls.reads, "takes read while nothing changed").toBe(reads);

      const other = await openReviewStore(state, { baseUrl: SERVICE });
      await other.recordDecisions([
        { key: "shop/mug~2", specHash: "h2", decision: "approved", reviewer: "ana" },
      ]);
      await other.close();
      await until(() => stream.text().includes("event: takes"), "the decision's event", 5_000);
      const change = stream.text().slice(stream.text().indexOf("event: takes"));
      expect(change).toContain('"job":"shop/mug~2"');
      expect(change).not.toContain('"job":"shop/mug~1"');
    } finally {
      stream.close();
      await server.close();
      await store.close();
    }
  });

  it("starts a page's stream with every take as the server has it: a decision made elsewhere while the stream began is not lost", async () => {
    const dir = await tempDir();
    const state = join(dir, "state.db");
    const writer = StateStore.open(state, { baseUrl: SERVICE });
    await writer.upsertJobs([{ ...TAKE, key: "shop/mug~1", videoId: "mug~1", specHash: "h1" }]);
    await writer.close();

    const store = await openReviewStore(state, { baseUrl: SERVICE });
    let first = true;
    // Another reviewer's decision lands between the server's change mark and its read of the takes,
    // as the stream begins: after the page itself had read them.
    const racing: typeof store = Object.assign(Object.create(store) as typeof store, {
      listLatestJobs: async () => {
        if (first) {
          first = false;
          const other = await openReviewStore(state, { baseUrl: SERVICE });
          await other.recordDecisions([
            { key: "shop/mug~1", specHash: "h1", decision: "approved", reviewer: "ana" },
          ]);
          await other.close();
        }
        return store.listLatestJobs();
      },
    });
    const server = await startReviewServer({
      store: racing,
      baseUrl: SERVICE,
      outDir: dir,
      port: 0,
      title: "t",
    });
    const stream = eventStream(server);
    try {
      await until(
        () => /"decision":"approved"/.test(stream.text()),
        "the decision on the page's stream",
        5_000,
      );
      expect(stream.text()).toMatch(/^retry: \d+\n\nevent: snapshot\n/);
    } finally {
      stream.close();
      await server.close();
      await store.close();
    }
  });
});
