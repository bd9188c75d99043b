// The behaviour every state store backend must have (src/state/job-store.ts), as one suite that takes
// a harness: bullmq's adapter-conformance idea. test/state/sqlite.conformance.test.ts runs it on the
// SQLite state file; a second backend (PostgreSQL) runs it on its own.
import { describe, expect, it } from "vitest";
import { ClaimLostError, JobGoneError } from "../../src/errors/state.js";
import { BudgetReachedError } from "../../src/state/named-budget.js";
import {
  type DecisionRow,
  decisionsByVersion,
  type JobStore,
  type NamedBudgetRecords,
  type NewDecision,
  type NewJob,
  type ReviewStore,
  type VideoTakes,
  versionKey,
} from "../../src/state/job-store.js";
import { JOB, seedJob, submittedRecord } from "../helpers/seed-jobs.js";

/**
 * Storage of one test, fresh each time. A store opened again after `close` sees what was written;
 * `open` is given the service's base URL (rows are scoped by it).
 */
export interface StoreHarness {
  open(baseUrl: string): Promise<JobStore>;
  /** A reader (`reel status`) beside the writer that holds the store. */
  openReader(baseUrl: string): Promise<JobStore>;
  /** A reader of every service's rows (`reel status` without --base-url). */
  openReaderOfAll(): Promise<JobStore>;
  /** A reviewer (`reel approve`, the review page) beside the writer that holds the store. */
  openReviewer(baseUrl: string): Promise<ReviewStore>;
  /** `reel budget set` beside the writer that holds the store (no lock, no runner, no service). */
  openBudgets(): Promise<NamedBudgetRecords & { close(): Promise<void> }>;
  /** Another process writing to the same storage, that no lock stopped (an older reel, a lock bypassed). */
  outside(): OutsideWriter;
}

/** What the other process does, each a direct write that races the store's own. */
export interface OutsideWriter {
  /** Writes its intent to submit job `id` (it read the row pending too). */
  claimJob(id: number): Promise<void>;
  /** Records the answer to its submission of job `id`. */
  answerJob(id: number, taskId: string): Promise<void>;
  /** Writes its intent to make this speech, on the first service of the storage. */
  startSpeech(voiceId: string, text: string): Promise<void>;
  /** Writes its intent to upload this content, on the first service of the storage. */
  startUpload(sha256: string): Promise<void>;
  close(): Promise<void>;
}

/** A take of video `a` of manifest `m`: `a~n`, its version `h<n>`. */
const take = (n: number): NewJob => ({ ...JOB, key: `m/a~${n}`, videoId: `a~${n}`, specHash: `h${n}` });

/** The plan of a retake, as src/review/retake.ts makes it: the take after every take so far. */
function nextTake(video: VideoTakes): NewJob {
  const numbers = [...video.jobs.map((row) => row.video_id), ...video.retakes.map((row) => row.videoId)].map(
    (id) => Number(/~(\d+)$/.exec(id)?.[1] ?? 1),
  );
  return take(Math.max(...numbers) + 1);
}

/** A decision as the tests compare it: what was recorded, not its id or time. */
const said = (row: DecisionRow | undefined) =>
  row && { decision: row.decision, reviewer: row.reviewer, note: row.note, specHash: row.specHash };

export function describeStoreConformance(name: string, makeHarness: () => Promise<StoreHarness>): void {
  describe(`state store conformance: ${name}`, () => {
    it("keeps asset ids and jobs per service address", async () => {
      const storage = await makeHarness();
      const a = await storage.open("https://a.example");
      await a.recordAsset("sha-1", "101", 10);
      await seedJob(a, JOB);
      await a.close();
      const b = await storage.open("https://b.example");
      expect(await b.findAsset("sha-1")).toBeUndefined();
      expect(await b.findJob("m/a", "h1")).toBeUndefined();
      await b.close();
      const again = await storage.open("https://a.example");
      expect(await again.findAsset("sha-1")).toBe("101");
      expect((await again.findJob("m/a", "h1"))?.state).toBe("pending");
      await again.close();
    });

    it("knows a service by its address however it is spelled, rows of older reels included", async () => {
      const storage = await makeHarness();
      // As an older reel recorded what the user typed.
      const old = await storage.open("HTTPS://API.Example.com:443/");
      await old.recordAsset("sha-1", "101", 10);
      await old.close();
      for (const spelling of [
        "https://api.example.com",
        "https://API.example.com/",
        "HTTPS://api.example.com:443",
      ]) {
        const store = await storage.open(spelling);
        expect(await store.findAsset("sha-1"), spelling).toBe("101");
        await store.close();
      }
      const other = await storage.open("https://api.example.com:8443");
      expect(await other.findAsset("sha-1")).toBeUndefined();
      await other.close();
    });

    it("answers a run's lookups for all its jobs at once: versions not recorded here, sent by no service, heads of known and new", async () => {
      const storage = await makeHarness();
      const elsewhere = await storage.open("https://b.example");
      const paidThere = await seedJob(elsewhere, take(3));
      await elsewhere.markSubmitting(paidThere.id);
      await elsewhere.close();
      const store = await storage.open("https://a.example");
      const sent = await seedJob(store, take(1));
      await store.markSubmitting(sent.id);
      await store.markSubmitted(sent.id, "t1");
      const unsent = await seedJob(store, take(2));
      const asked = [take(1), take(2), take(3), take(4), { key: "m/a~1", specHash: "h9" }];
      // In the list's order, what a rerun asks: its few new jobs come back.
      expect(await store.notRecorded(asked)).toEqual([take(3), take(4), asked[4]]);
      expect(await store.notSentAnywhere(asked)).toEqual([take(2), take(4), asked[4]]);
      expect(await store.notRecorded([])).toEqual([]);
      expect(await store.notSentAnywhere([])).toEqual([]);
      // Known and new mixed, a version listed twice: each head where its job is, the new ones added once.
      const heads = await store.upsertJobs([take(4), take(1), take(3), take(2), take(4)]);
      expect(heads[1]).toEqual({ id: sent.id, state: "submitted", file: null });
      expect(heads[3]).toEqual({ id: unsent.id, state: "pending", file: null });
      expect(heads[0]).toEqual(heads[4]);
      expect(heads[0]!.state).toBe("pending");
      expect(heads[2]!.state).toBe("pending"); // sent by the other service only: new here
      expect(new Set(heads.map((head) => head.id)).size).toBe(4);
      expect(await store.notRecorded(asked)).toEqual([asked[4]]);
      await store.close();
    });

    it("turns a submission without a recorded answer into an uncertain job at the next start", async () => {
      const storage = await makeHarness();
      const store = await storage.open("https://a.example");
      const row = await seedJob(store, JOB);
      await store.markSubmitting(row.id);
      await store.close();
      const next = await storage.open("https://a.example");
      expect(await next.markInterruptedSubmissionsUncertain()).toBe(1);
      const after = await next.getJob(row.id);
      expect(after.state).toBe("uncertain");
      expect(after.attempts).toBe(1);
      await next.close();
    });

    it("shows another reader (reel status) each turn's writes as soon as the turn ends", async () => {
      const storage = await makeHarness();
      const store = await storage.open("x");
      const row = await seedJob(store, JOB);
      store.markSubmitting(row.id).catch(() => {});
      await new Promise((resolve) => setImmediate(resolve));
      await store.markSubmitted(row.id, "42");
      await new Promise((resolve) => setImmediate(resolve));
      const reader = await storage.openReader("x");
      expect(await reader.getJob(row.id)).toMatchObject({ state: "submitted", task_id: "42" });
      await reader.close();
      await store.close();
    });

    it("forgets only unsent jobs a manifest no longer lists, and refuses an intent for a forgotten job", async () => {
      const storage = await makeHarness();
      const store = await storage.open("x");
      const kept = await seedJob(store, JOB);
      const removed = await seedJob(store, { ...JOB, key: "m/b", videoId: "b" });
      const sent = await seedJob(store, { ...JOB, key: "m/c", videoId: "c" });
      const elsewhere = await seedJob(store, { ...JOB, key: "n/d", manifest: "n", videoId: "d" });
      await store.markSubmitting(sent.id);
      await store.markRefused(sent.id, "503"); // pending again, nothing created: forgettable
      const paid = await seedJob(store, { ...JOB, key: "m/e", videoId: "e" });
      await store.markSubmitting(paid.id);
      await store.markSubmitted(paid.id, "9");
      await store.markFailed(paid.id, "task", "boom");
      await store.markPending(paid.id, "--retry-failed"); // pending, but an attempt was paid for: kept

      expect(await store.forgetUnsentJobs("m", new Set([`m/a\nh1`]))).toBe(2);
      const ids = (await store.listJobs()).map((row) => row.id);
      expect(ids).toEqual([kept.id, elsewhere.id, paid.id]);
      await expect(store.markSubmitting(removed.id)).rejects.toThrow(/not in the state file/);
      // Their events name the process, as every state change's does.
      await store.flush();
      const events = await store.readEvents({});
      const runners = (kind: string) => events.filter((e) => e.kind === kind).map((e) => e.runner);
      const [runner] = runners("submitting");
      expect(runner).toMatch(/:\d+$/);
      expect(runners("forgotten")).toEqual([runner, runner]);
      await store.close();
    });

    it("tells a job written back from its record (--rebuild-state) by its key and its runner, as every state change", async () => {
      const storage = await makeHarness();
      const store = await storage.open("x");
      const sent = await seedJob(store, { ...JOB, key: "m/b", videoId: "b" });
      await store.markSubmitting(sent.id);
      expect(await store.restoreJobs([submittedRecord(JOB, "40")])).toBe(1);
      await store.flush();
      const events = await store.readEvents({});
      const runner = events.find((e) => e.kind === "submitting")?.runner;
      expect(runner).toMatch(/:\d+$/);
      expect(events.filter((e) => e.kind === "restored").map((e) => [e.jobKey, e.runner])).toEqual([
        ["m/a", runner],
      ]);
      await store.close();
    });

    it("lists every version of one manifest's jobs, and counts a generation under way as made", async () => {
      const storage = await makeHarness();
      const store = await storage.open("x");
      const first = await seedJob(store, JOB);
      const edited = await seedJob(store, { ...JOB, specHash: "h2", specJson: '{"edited":true}' });
      await seedJob(store, { ...JOB, key: "n/a", manifest: "n", specHash: "h3" });
      expect((await store.listManifestJobs("m")).map((row) => row.id)).toEqual([first.id, edited.id]);
      expect(await store.madeSpecs()).toEqual(new Map());
      // Sent, no answer yet, then answered: either way paid for, so a renamed manifest's twin pays again.
      await store.markSubmitting(first.id);
      expect(await store.madeSpecs()).toEqual(new Map([["h1", "m/a"]]));
      await store.markSubmitted(first.id, "7");
      expect(await store.madeSpecs()).toEqual(new Map([["h1", "m/a"]]));
      await store.close();
    });

    it("answers madeSpecs for the spec hashes asked about alone (a rerun's few new jobs)", async () => {
      const storage = await makeHarness();
      const store = await storage.open("x");
      const first = await seedJob(store, JOB);
      const edited = await seedJob(store, { ...JOB, specHash: "h2", specJson: '{"edited":true}' });
      await store.markSubmitting(first.id);
      await store.markSubmitting(edited.id);
      expect(await store.madeSpecs(["h2", "h9"])).toEqual(new Map([["h2", "m/a"]]));
      expect(await store.madeSpecs(["h9"])).toEqual(new Map());
      expect(await store.madeSpecs([])).toEqual(new Map());
      expect(await store.madeSpecs()).toEqual(
        new Map([
          ["h1", "m/a"],
          ["h2", "m/a"],
        ]),
      );
      await store.close();
    });

    it("keeps the manifests of each output folder, whatever the service, until one is forgotten", async () => {
      const storage = await makeHarness();
      const a = await storage.open("https://a.example");
      await a.recordOutManifest("/work/out", "promo");
      await a.recordOutManifest("/work/out", "broll");
      await a.recordOutManifest("/work/out", "promo"); // again: once
      await a.recordOutManifest("/elsewhere/out", "spring");
      await a.close();
      const b = await storage.open("https://b.example");
      expect(await b.outManifests("/work/out")).toEqual(["broll", "promo"]);
      expect(await b.outManifests("/nowhere")).toEqual([]);
      expect(await b.forgetOutManifest("/work/out", "broll")).toBe(true);
      expect(await b.forgetOutManifest("/work/out", "broll")).toBe(false);
      expect(await b.outManifests("/work/out")).toEqual(["promo"]);
      expect(await b.outManifests("/elsewhere/out")).toEqual(["spring"]);
      await b.close();
    });

    // Costed intents are compare-and-set: whatever fooled the lock, one job, speech or upload is
    // claimed once (see test/state/two-runners.test.ts for two real runners).
    it("claims a job for submission once: a row another process claimed is not sent again", async () => {
      const storage = await makeHarness();
      const store = await storage.open("x");
      const row = await seedJob(store, JOB);
      await store.flush();
      // The other process read the row pending too, and wrote its intent first.
      const other = storage.outside();
      await other.claimJob(row.id);
      expect(await store.markSubmitting(row.id)).toBeNull();
      expect((await store.getJob(row.id)).attempts).toBe(1); // its attempt, not a second one
      await store.flush(); // the turn's transaction, else the other writer waits on it
      // Its answer came: a --retry-failed or --resubmit-uncertain here must not make it pending again.
      await other.answerJob(row.id, "77");
      expect(await store.markPending(row.id, "--resubmit-uncertain")).toBe(false);
      expect(await store.getJob(row.id)).toMatchObject({ state: "submitted", task_id: "77" });
      await other.close();
      // The states a submission legitimately starts from are claimed, each claim naming its attempt.
      const fresh = await seedJob(store, { ...JOB, key: "m/b", videoId: "b" });
      expect(await store.markSubmitting(fresh.id)).toBe(1);
      await store.markFailed(fresh.id, "local", "the file vanished");
      expect(await store.markSubmitting(fresh.id)).toBe(2);
      await store.markUncertain(fresh.id, "lost answer");
      expect(await store.markSubmitting(fresh.id)).toBeNull();
      expect(await store.markPending(fresh.id, "--resubmit-uncertain")).toBe(true);
      expect(await store.markSubmitting(fresh.id)).toBe(3);
      await store.close();
    });

    it("tells a job in doubt for its speech alone (never claimed) from one whose own submission may have been sent", async () => {
      const storage = await makeHarness();
      const store = await storage.open("x");
      const row = await seedJob(store, JOB);
      await store.markSpeechDoubt(row.id, "its speech has no answer");
      expect(await store.getJob(row.id)).toMatchObject({
        state: "uncertain",
        fail_kind: "speech",
        attempts: 0,
      });
      // Back to pending, claimed: the claim clears the mark, and a doubt of the submission has none.
      expect(await store.markPending(row.id, "its speech is known")).toBe(true);
      expect(await store.markSubmitting(row.id)).toBe(1);
      await store.markUncertain(row.id, "lost answer");
      expect(await store.getJob(row.id)).toMatchObject({ state: "uncertain", fail_kind: null, attempts: 1 });
      // Never over a job claimed (another process's intent, or an answer): only before any claim.
      const other = storage.outside();
      const claimed = await seedJob(store, { ...JOB, key: "m/b", videoId: "b" });
      await store.flush();
      await other.claimJob(claimed.id);
      await other.close();
      await store.markSpeechDoubt(claimed.id, "its speech has no answer");
      expect(await store.getJob(claimed.id)).toMatchObject({ state: "submitting", fail_kind: null });
      await store.markSpeechDoubt(row.id, "its speech has no answer");
      expect(await store.getJob(row.id)).toMatchObject({ state: "uncertain", fail_kind: null });
      await store.close();
    });

    it("records a task id for one job of a service: an answer naming a task another job holds writes nothing and names it", async () => {
      const storage = await makeHarness();
      const store = await storage.open("x");
      const [a, b] = [await seedJob(store, JOB), await seedJob(store, { ...JOB, key: "m/b", videoId: "b" })];
      expect(await store.markSubmitting(a.id)).toBe(1);
      expect(await store.markSubmitting(b.id)).toBe(1);
      expect(await store.markSubmitted(a.id, "7")).toBeUndefined();
      expect(await store.markSubmitted(b.id, "7")).toBe("m/a");
      expect(await store.getJob(b.id)).toMatchObject({ state: "submitting", task_id: null });
      expect(await store.getJob(a.id)).toMatchObject({ state: "submitted", task_id: "7" });
      await store.close();
      // Task 7 of another service is another task.
      const other = await storage.open("y");
      const c = await seedJob(other, JOB);
      expect(await other.markSubmitting(c.id)).toBe(1);
      expect(await other.markSubmitted(c.id, "7")).toBeUndefined();
      await other.close();
    });

    it("makes one speech intent and one upload intent win", async () => {
      const storage = await makeHarness();
      const store = await storage.open("x");
      await store.flush();
      const other = storage.outside();
      await other.startSpeech("17", "hello");
      await other.startUpload("abc");
      await other.close();
      await expect(store.markSpeechCreating("17", "hello")).rejects.toThrow(ClaimLostError);
      await expect(store.markUploading("abc")).rejects.toThrow(ClaimLostError);
      // Its own intents, and a resubmission over an uncertain speech, are made.
      await store.markSpeechUncertain("17", "hello", "lost");
      await store.markSpeechCreating("17", "hello");
      await store.markSpeechCreating("18", "hello");
      await store.markUploading("def");
      await store.markUploading("def"); // its own intent again (an upload retried in the same run)
      await store.close();
    });

    it("keeps each job version's decisions beside a writer that holds the store; the latest counts", async () => {
      const storage = await makeHarness();
      const writer = await storage.open("x");
      const a = await seedJob(writer, JOB);
      await seedJob(writer, { ...JOB, specHash: "h2", specJson: '{"edited":true}' });
      await seedJob(writer, { ...JOB, key: "m/b", videoId: "b" });
      await writer.flush();
      // The writer (a run, a watch) stays open, holding the store, while a reviewer decides.
      const reviewer = await storage.openReviewer("x");
      const decide = (list: NewDecision[]) => reviewer.recordDecisions(list);
      const [approved] = await decide([
        { key: "m/a", specHash: "h1", decision: "approved", reviewer: "ana" },
      ]);
      expect(approved).toMatchObject({ key: "m/a", specHash: "h1", decision: "approved", reviewer: "ana" });
      expect(approved!.note).toBeNull();
      expect(approved!.decidedAt).toBeGreaterThan(0);
      await decide([
        { key: "m/a", specHash: "h1", decision: "rejected", reviewer: "bob", note: "smile too wide" },
        { key: "m/b", specHash: "h1", decision: "approved", reviewer: "bob" },
      ]);
      const latest = decisionsByVersion(await reviewer.latestDecisions());
      expect(said(latest.get(versionKey("m/a", "h1")))).toEqual({
        decision: "rejected",
        reviewer: "bob",
        note: "smile too wide",
        specHash: "h1",
      });
      expect(said(latest.get(versionKey("m/b", "h1")))?.decision).toBe("approved");
      // The edited version is a job of its own, undecided.
      expect(latest.has(versionKey("m/a", "h2"))).toBe(false);
      expect(latest.size).toBe(2);
      // Only the versions asked for, when some are named.
      const some = await reviewer.latestDecisions([{ key: "m/b", specHash: "h1" }]);
      expect(some.map((row) => row.key)).toEqual(["m/b"]);
      // A decision cleared: the history keeps it, the latest says so.
      await decide([{ key: "m/a", specHash: "h1", decision: "cleared", reviewer: "ana" }]);
      const cleared = decisionsByVersion(await reviewer.latestDecisions());
      expect(cleared.get(versionKey("m/a", "h1"))?.decision).toBe("cleared");
      const history = await reviewer.decisionHistory("m/a", "h1");
      expect(history.map((row) => [row.decision, row.reviewer, row.note])).toEqual([
        ["approved", "ana", null],
        ["rejected", "bob", "smile too wide"],
        ["cleared", "ana", null],
      ]);
      expect(await reviewer.decisionHistory("m/a", "h2")).toEqual([]);
      // All or nothing: one bad decision in a list records none of it.
      await expect(
        decide([
          { key: "m/b", specHash: "h1", decision: "rejected", reviewer: "ana" },
          { key: "m/b", specHash: "h1", decision: "maybe" as NewDecision["decision"], reviewer: "ana" },
        ]),
      ).rejects.toThrow();
      expect((await reviewer.decisionHistory("m/b", "h1")).map((row) => row.decision)).toEqual(["approved"]);
      await reviewer.close();

      // The writer goes on writing, and reads the decisions (its records carry them).
      expect(await writer.markSubmitting(a.id)).toBe(1);
      const seen = decisionsByVersion(await writer.latestDecisions());
      expect(seen.get(versionKey("m/b", "h1"))?.reviewer).toBe("bob");
      await writer.close();
      // Another reader sees them; another service has none; a reader of every service, each's own.
      const reader = await storage.openReader("x");
      expect(await reader.latestDecisions()).toHaveLength(2);
      await reader.close();
      const other = await storage.open("https://other.example");
      await seedJob(other, JOB);
      expect(await other.latestDecisions()).toEqual([]);
      await other.close();
      const otherReviewer = await storage.openReviewer("https://other.example");
      await otherReviewer.recordDecisions([
        { key: "m/a", specHash: "h1", decision: "approved", reviewer: "cy" },
      ]);
      await otherReviewer.close();
      const all = await storage.openReaderOfAll();
      const everyService = (await all.latestDecisions())
        .map((row) => `${row.baseUrl} ${row.key} ${row.decision}`)
        .sort();
      expect(everyService).toEqual(["https://other.example m/a approved", "x m/a cleared", "x m/b approved"]);
      await all.close();
    });

    it("moves the change mark on each write a review page shows, of its service only, and not on a read", async () => {
      const storage = await makeHarness();
      let writer = await storage.open("x");
      await seedJob(writer, { ...JOB, key: "n/b", manifest: "n", videoId: "b" });
      await writer.close();
      const reviewer = await storage.openReviewer("x");
      // A job's updated_at is the clock's millisecond: each step starts on a new one, as real writes do.
      let tick = Date.now();
      const step = async (write: () => Promise<unknown>): Promise<string> => {
        while (Date.now() === tick) await new Promise((resolve) => setImmediate(resolve));
        await write();
        await writer.flush();
        tick = Date.now();
        return reviewer.changeMark();
      };
      const marks = [await reviewer.changeMark()];
      const moved = async (write: () => Promise<unknown>): Promise<void> => {
        const mark = await step(write);
        expect(marks).not.toContain(mark);
        marks.push(mark);
      };
      const still = async (write: () => Promise<unknown>): Promise<void> => {
        expect(await step(write)).toBe(marks.at(-1));
      };
      // Another service's writer (one writer at a time holds a state file).
      await still(async () => {
        const other = await storage.open("y");
        await seedJob(other, take(1));
        await other.close();
      });
      writer = await storage.open("x");
      await moved(() => writer.upsertJobs([take(1), take(2)]));
      const one = (await writer.findJob("m/a~1", "h1"))!;
      await still(() => reviewer.listLatestJobs());
      await moved(() => writer.markSubmitting(one.id));
      await moved(() => writer.markSubmitted(one.id, "1801"));
      await moved(() => writer.markFailed(one.id, "task", "refused"));
      await moved(() =>
        reviewer.recordDecisions([{ key: "m/a~2", specHash: "h2", decision: "approved", reviewer: "ana" }]),
      );
      await moved(() =>
        reviewer.queueRetake({ from: { key: "m/a~2", specHash: "h2" }, reviewer: "ana", plan: nextTake }),
      );
      await moved(() => reviewer.withdrawRetake("m/a~3"));
      await still(() => reviewer.listRetakes());
      await reviewer.close();
      await writer.close();
    });

    it("queues a retake as the next take of its video, rejects the take retaken, and withdraws it until claimed", async () => {
      const storage = await makeHarness();
      const writer = await storage.open("x");
      await writer.upsertJobs([take(1), take(2)]);
      // Other videos whose ids start alike are not takes of `a`.
      await writer.upsertJobs([
        { ...JOB, key: "m/ab~7", videoId: "ab~7" },
        { ...JOB, key: "m/a_x", videoId: "a_x" },
        { ...JOB, key: "n/a~9", manifest: "n", videoId: "a~9" },
      ]);
      await writer.flush();
      const reviewer = await storage.openReviewer("x");
      let seen: VideoTakes | undefined;
      const first = await reviewer.queueRetake({
        from: { key: "m/a~2", specHash: "h2" },
        reviewer: "ana",
        note: "smile too wide",
        plan: (video) => {
          seen = video;
          return nextTake(video);
        },
      });
      expect(seen!.jobs.map((row) => row.job_key)).toEqual(["m/a~1", "m/a~2"]);
      expect(first).toMatchObject({
        key: "m/a~3",
        manifest: "m",
        videoId: "a~3",
        specHash: "h3",
        fromKey: "m/a~2",
        reviewer: "ana",
        note: "smile too wide",
        state: "queued",
        withdrawnAt: null,
      });
      const [rejected] = await reviewer.latestDecisions([{ key: "m/a~2", specHash: "h2" }]);
      expect(rejected).toMatchObject({ decision: "rejected", reviewer: "ana", note: "smile too wide" });
      // Retaking again (the same take, or the retake): one more take each.
      const second = await reviewer.queueRetake({
        from: { key: "m/a~2", specHash: "h2" },
        reviewer: "bob",
        plan: nextTake,
      });
      expect(second.key).toBe("m/a~4");
      // A plan that throws records nothing.
      await expect(
        reviewer.queueRetake({
          from: { key: "m/a~1", specHash: "h1" },
          reviewer: "ana",
          plan: () => {
            throw new Error("no seed left");
          },
        }),
      ).rejects.toThrow("no seed left");
      expect(await reviewer.latestDecisions([{ key: "m/a~1", specHash: "h1" }])).toEqual([]);
      expect((await reviewer.listRetakes()).map((row) => `${row.key} ${row.state}`)).toEqual([
        "m/a~3 queued",
        "m/a~4 queued",
      ]);

      // The run claims a~3 first: too late to withdraw. a~4 is withdrawn: the run's claim finds it gone.
      const three = (await writer.findJob("m/a~3", "h3"))!;
      const four = (await writer.findJob("m/a~4", "h4"))!;
      expect(three.state).toBe("pending");
      expect(await writer.markSubmitting(three.id)).toBe(1);
      await writer.flush();
      expect(await reviewer.withdrawRetake("m/a~3")).toBe("sent");
      expect(await reviewer.withdrawRetake("m/a~4")).toBe("withdrawn");
      expect(await reviewer.withdrawRetake("m/a~4")).toBe("none");
      expect(await reviewer.withdrawRetake("m/a~1")).toBe("none");
      await expect(writer.markSubmitting(four.id)).rejects.toThrow(JobGoneError);
      await writer.flush(); // its turn's transaction, else the reviewer (in this same process) waits on it
      expect(await writer.findJob("m/a~4", "h4")).toBeUndefined();
      // A withdrawn take's number is not given again.
      expect(
        (
          await reviewer.queueRetake({
            from: { key: "m/a~1", specHash: "h1" },
            reviewer: "ana",
            plan: nextTake,
          })
        ).key,
      ).toBe("m/a~5");
      const listed = await reviewer.listRetakes(["m"]);
      expect(listed.map((row) => `${row.key} ${row.state}`)).toEqual([
        "m/a~3 sent",
        "m/a~4 withdrawn",
        "m/a~5 queued",
      ]);
      expect(await reviewer.listRetakes(["n"])).toEqual([]);
      // A run that forgets an unsent retake's job (its video edited away) drops it.
      await writer.forgetUnsentJobs("m", new Set([`m/a~1\nh1`, `m/a~2\nh2`, `m/a~3\nh3`]));
      await writer.flush();
      expect((await reviewer.listRetakes()).map((row) => row.state)).toEqual([
        "sent",
        "withdrawn",
        "dropped",
      ]);
      await expect(
        reviewer.queueRetake({ from: { key: "m/zz", specHash: "h1" }, reviewer: "ana", plan: nextTake }),
      ).rejects.toThrow(/not in the/);
      await reviewer.close();
      await writer.close();
    });

    it("tells a retake in the event stream as a decision does: the take retaken rejected, then the retake and its withdrawal, by the reviewer's process", async () => {
      const storage = await makeHarness();
      const writer = await storage.open("x");
      await writer.upsertJobs([take(1), take(2)]);
      await writer.flush();
      const reviewer = await storage.openReviewer("x");
      await reviewer.queueRetake({ from: { key: "m/a~2", specHash: "h2" }, reviewer: "ana", plan: nextTake });
      expect(await reviewer.withdrawRetake("m/a~3")).toBe("withdrawn");
      await reviewer.close();
      const events = (await writer.readEvents({})).filter((e) => e.kind !== "job.queued");
      // The withdrawn take's key is told though its job is gone.
      expect(events.map((e) => [e.kind, e.jobKey])).toEqual([
        ["job.decided", "m/a~2"],
        ["retake", "m/a~3"],
        ["forgotten", "m/a~3"],
      ]);
      expect(JSON.parse(events[0]!.detail!)).toEqual({ decision: "rejected", reviewer: "ana" });
      expect(events[0]!.runner).toMatch(/:\d+$/);
      expect(events.map((e) => e.runner)).toEqual(events.map(() => events[0]!.runner));
      await writer.close();
    });

    it("charges a capped run's claims and speech with their intents, once, at their price then, and refunds them", async () => {
      const storage = await makeHarness();
      const store = await storage.open("x");
      const owner = { host: "here", pid: 101 };
      const session = await store.startBudgetSession("run a", owner);
      expect(await store.openBudgetSessions("run a")).toMatchObject([{ id: session.id, runs: "here" }]);
      const charge = { session: session.id, model: "actor-2", resolution: "720p", seconds: 5, credits: 12.5 };
      const a = await seedJob(store, JOB);
      const b = await seedJob(store, { ...JOB, key: "m/b", videoId: "b", specHash: "h2", seconds: 8 });
      const c = await seedJob(store, { ...JOB, key: "m/c", videoId: "c", specHash: "h3" });
      expect(await store.markSubmitting(a.id, charge)).toBe(1);
      // A claim refused (the row moved on) is charged nothing.
      expect(await store.markSubmitting(a.id, charge)).toBeNull();
      // Sent with no price known (no price list): its credits are left to the reader.
      expect(
        await store.markSubmitting(b.id, { ...charge, seconds: 8, resolution: "1080p", credits: null }),
      ).toBe(1);
      // The same model and resolution at another price (the list changed between two runs).
      expect(await store.markSubmitting(c.id, { ...charge, credits: 5 })).toBe(1);
      await store.markSpeechCreating("17", "hello", { session: session.id, credits: 0.25 });
      await store.markSpeechCreating("19", "hey", { session: session.id, credits: null });
      // Another process's speech intent wins over this one: charged nothing.
      const outside = storage.outside();
      await outside.startSpeech("18", "hi");
      await outside.close();
      await expect(
        store.markSpeechCreating("18", "hi", { session: session.id, credits: 0.25 }),
      ).rejects.toThrow(ClaimLostError);
      await store.flush();
      expect(await store.budgetSpent(session.id)).toEqual({
        videos: [
          { model: "actor-2", resolution: "1080p", seconds: 8, count: 1, credits: null },
          { model: "actor-2", resolution: "720p", seconds: 10, count: 2, credits: 17.5 },
        ],
        speech: [
          { count: 1, credits: 0.25 },
          { count: 1, credits: null },
        ],
      });
      // Withdrawn (nothing sent) and refused speech: refunded; the other charges stay.
      await store.withdrawSubmitting(a.id);
      await store.refundVideo(session.id, a.id, 1);
      await store.clearSpeech("17", "hello");
      await store.refundSpeech(session.id, "17", "hello");
      expect(await store.budgetSpent(session.id)).toEqual({
        videos: [
          { model: "actor-2", resolution: "1080p", seconds: 8, count: 1, credits: null },
          { model: "actor-2", resolution: "720p", seconds: 5, count: 1, credits: 5 },
        ],
        speech: [{ count: 1, credits: null }],
      });
      // Claimed again, and a lost refund's charge met again: counted once.
      expect(await store.markSubmitting(a.id, charge)).toBe(1);
      expect((await store.budgetSpent(session.id)).videos.map((v) => v.credits)).toEqual([null, 17.5]);
      await store.close();

      // Its run is gone once its store is closed, whatever host and pid it recorded; another process
      // resumes it, and then runs it; an ended session is not open.
      const again = await storage.open("x");
      const [open] = await again.openBudgetSessions("run a");
      expect(open).toMatchObject({ id: session.id, host: "here", pid: 101, scope: "run a", runs: "gone" });
      expect(await again.openBudgetSessions("run b")).toEqual([]);
      expect(await again.takeBudgetSession(open!, { host: "there", pid: 202 })).toBe(true);
      expect(await again.openBudgetSessions("run a")).toMatchObject([
        { host: "there", pid: 202, runs: "here" },
      ]);
      // Taken again by the same process (a retry): still its own.
      expect(await again.takeBudgetSession(open!, { host: "there", pid: 202 })).toBe(true);
      expect((await again.budgetSpent(session.id)).videos.map((v) => v.seconds)).toEqual([8, 10]);
      await again.endBudgetSession(session.id);
      expect(await again.openBudgetSessions("run a")).toEqual([]);
      // Sessions are scoped by service.
      await again.close();
      const other = await storage.open("https://other.example");
      expect(await other.openBudgetSessions("run a")).toEqual([]);
      await other.close();
    });
    it("spends a named budget in the claim's own write: never past its cap, whatever runs at once; raised, it goes on; refunded once", async () => {
      const storage = await makeHarness();
      const store = await storage.open("x");
      const setter = await storage.openBudgets();
      // Set beside the writer that holds the store, as `reel budget set` is.
      const team = await setter.setBudget("team", { maxSeconds: 12 });
      expect(team).toMatchObject({ name: "team", maxSeconds: 12, maxCredits: null, spentSeconds: 0 });
      const session = await store.startBudgetSession("run a", { host: "here", pid: 1 });
      const charge = (seconds: number) => ({
        session: session.id,
        model: "actor-2",
        resolution: null,
        seconds,
        credits: null,
        named: { budget: team.id, seconds, credits: 0 },
      });
      const rows = [];
      for (const id of ["a", "b", "c", "d", "e", "f"])
        rows.push(await seedJob(store, { ...JOB, key: `m/${id}`, videoId: id, specHash: `h-${id}` }));
      // Six claims of 5 s at once under a cap of 12: two fit; the others are refused whole.
      const claims = await Promise.allSettled(rows.map((row) => store.markSubmitting(row.id, charge(5))));
      const won = claims.filter((c) => c.status === "fulfilled");
      expect(won).toHaveLength(2);
      for (const c of claims.filter((c) => c.status === "rejected"))
        expect((c as PromiseRejectedResult).reason).toBeInstanceOf(BudgetReachedError);
      await store.flush();
      const states = await Promise.all(rows.map(async (row) => (await store.findJobById(row.id))!.state));
      expect(states.filter((state) => state === "submitting")).toHaveLength(2);
      expect(states.filter((state) => state === "pending")).toHaveLength(4);
      // Nothing of a refused claim is left: not its attempt, nor a charge in the run's own ledger.
      expect((await store.budgetSpent(session.id)).videos).toMatchObject([{ seconds: 10, count: 2 }]);
      expect(await store.findBudget("team")).toMatchObject({ spentSeconds: 10, maxSeconds: 12 });
      const [pendingOne, pendingTwo] = rows.filter((_, i) => states[i] === "pending");
      const refused = await store.markSubmitting(pendingOne!.id, charge(5)).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(BudgetReachedError);
      expect((refused as BudgetReachedError).budget).toMatchObject({ name: "team", spentSeconds: 10 });
      // Raised beside the writer (once its turn is committed, as another process would wait for it):
      // its next claim reads the new cap; what was spent stays spent.
      await store.flush();
      expect(await setter.setBudget("team", { maxSeconds: 15 })).toMatchObject({ spentSeconds: 10 });
      expect(await store.markSubmitting(pendingOne!.id, charge(5))).toBe(1);
      // A claim withdrawn and refunded gives its charge back, once however often the refund is made.
      await store.withdrawSubmitting(pendingOne!.id);
      await store.refundVideo(session.id, pendingOne!.id, 1);
      await store.refundVideo(session.id, pendingOne!.id, 1);
      await store.flush();
      expect(await store.findBudget("team")).toMatchObject({ spentSeconds: 10 });
      // A claim whose refund was lost (a crash after the withdrawal) met again: spent once.
      expect(await store.markSubmitting(pendingTwo!.id, charge(5))).toBe(1);
      await store.withdrawSubmitting(pendingTwo!.id);
      expect(await store.markSubmitting(pendingTwo!.id, charge(5))).toBe(1);
      await store.flush();
      expect(await store.findBudget("team")).toMatchObject({ spentSeconds: 15 });

      // A credits budget keeps the price list it was set with; speech spends from it with its intent.
      const prices = { file: "prices.yaml", json: '{"video":{"actor-2":2},"speech":0.6}' };
      const voice = await setter.setBudget("voice", { maxCredits: 1, prices });
      const speech = {
        session: session.id,
        credits: 0.6,
        named: { budget: voice.id, seconds: 0, credits: 0.6 },
      };
      await store.markSpeechCreating("17", "hello", speech);
      await expect(store.markSpeechCreating("17", "again", speech)).rejects.toThrow(BudgetReachedError);
      expect(await store.findSpeech("17", "again")).toBeUndefined();
      await store.clearSpeech("17", "hello");
      await store.refundSpeech(session.id, "17", "hello");
      await store.flush();
      expect(await store.findBudget("voice")).toMatchObject({ spentCredits: 0, prices, maxCredits: 1 });
      // Changing one cap keeps the other, and the list.
      expect(await setter.setBudget("voice", { maxSeconds: 100 })).toMatchObject({
        maxSeconds: 100,
        maxCredits: 1,
        prices,
      });
      expect((await store.listBudgets()).map((b) => b.name)).toEqual(["team", "voice"]);
      await setter.close();
      await store.close();
      // Not scoped by service: a runner of another address spends from the same budget.
      const other = await storage.open("https://other.example");
      expect(await other.findBudget("team")).toMatchObject({ spentSeconds: 15, maxSeconds: 15 });
      await other.close();
      const reader = await storage.openReaderOfAll();
      expect((await reader.listBudgets()).map((b) => b.name)).toEqual(["team", "voice"]);
      await reader.close();
    });

    it("tells each share of a named budget once, with the spend that passed it, whatever runs at once; the first refusal tells 100%; a raised cap tells them again", async () => {
      const storage = await makeHarness();
      const store = await storage.open("x");
      const setter = await storage.openBudgets();
      const team = await setter.setBudget("team", { maxSeconds: 10 });
      const session = await store.startBudgetSession("run a", { host: "here", pid: 1 });
      const rows: Awaited<ReturnType<typeof seedJob>>[] = [];
      for (let i = 0; i < 9; i++)
        rows.push(await seedJob(store, { ...JOB, key: `m/${i}`, videoId: `${i}`, specHash: `h-${i}` }));
      const claim = (i: number, seconds: number) =>
        store.markSubmitting(rows[i]!.id, {
          session: session.id,
          model: "actor-2",
          resolution: null,
          seconds,
          credits: null,
          named: { budget: team.id, seconds, credits: 0 },
        });
      const told = async () => {
        await store.flush();
        return (await store.readEvents({}))
          .filter((e) => e.kind === "budget-notice")
          .map(
            (e) =>
              JSON.parse(e.detail!) as { percent: number; spent: number; max: number; refused?: unknown },
          );
      };
      // Four claims of 2 s at once: the one that passes 8 s tells 80%, once.
      await Promise.all([0, 1, 2, 3].map((i) => claim(i, 2)));
      expect(await told()).toEqual([{ percent: 80, budget: "team", cap: "seconds", spent: 8, max: 10 }]);
      await claim(4, 2);
      // Refused, full: told already.
      await expect(claim(5, 2)).rejects.toThrow(BudgetReachedError);
      expect((await told()).map((n) => [n.percent, n.spent])).toEqual([
        [80, 8],
        [100, 10],
      ]);
      // Set again without a higher cap: nothing is armed again.
      await setter.setBudget("team", { maxSeconds: 10 });
      await expect(claim(5, 2)).rejects.toThrow(BudgetReachedError);
      expect(await told()).toHaveLength(2);
      // Raised to 20 (10 spent, 50%): both shares are told again, the last by the first refusal.
      await setter.setBudget("team", { maxSeconds: 20 });
      await claim(5, 4);
      await claim(6, 2);
      await expect(claim(7, 5)).rejects.toThrow(BudgetReachedError);
      await expect(claim(8, 5)).rejects.toThrow(BudgetReachedError);
      expect((await told()).slice(2)).toEqual([
        { percent: 80, budget: "team", cap: "seconds", spent: 16, max: 20 },
        {
          percent: 100,
          budget: "team",
          cap: "seconds",
          spent: 16,
          max: 20,
          refused: { amount: 5, for: "job" },
        },
      ]);
      await setter.close();
      await store.close();
    });
  });
}
