// The behaviour every state store backend must have (src/state/job-store.ts), as one suite that takes
// a harness: bullmq's adapter-conformance idea. test/state/sqlite.conformance.test.ts runs it on the
// SQLite state file; a second backend (PostgreSQL, issue 18) runs it on its own.
import { describe, expect, it } from "vitest";
import { ClaimLostError } from "../../src/state/errors.js";
import type { JobStore } from "../../src/state/job-store.js";

/**
 * Storage of one test, fresh each time. A store opened again after `close` sees what was written;
 * `open` is given the service's base URL (rows are scoped by it).
 */
export interface StoreHarness {
  open(baseUrl: string): JobStore;
  /** A reader (`reel status`) beside the writer that holds the store. */
  openReader(baseUrl: string): JobStore;
  /** Another process writing to the same storage, that no lock stopped (an older reel, a lock bypassed). */
  outside(): OutsideWriter;
}

/** What the other process does, each a direct write that races the store's own. */
export interface OutsideWriter {
  /** Writes its intent to submit job `id` (it read the row pending too). */
  claimJob(id: number): void;
  /** Records the answer to its submission of job `id`. */
  answerJob(id: number, taskId: string): void;
  /** Writes its intent to make this speech, on the first service of the storage. */
  startSpeech(voiceId: string, text: string): void;
  /** Writes its intent to upload this content, on the first service of the storage. */
  startUpload(sha256: string): void;
  close(): void;
}

const JOB = {
  key: "m/a",
  manifest: "m",
  videoId: "a",
  specHash: "h1",
  specJson: "{}",
  seconds: 5,
  model: "actor-2",
};

export function describeStoreConformance(name: string, makeHarness: () => Promise<StoreHarness>): void {
  describe(`state store conformance: ${name}`, () => {
    it("keeps asset ids and jobs per service address", async () => {
      const storage = await makeHarness();
      const a = storage.open("https://a.example");
      a.recordAsset("sha-1", "101", 10);
      a.upsertJob(JOB);
      a.close();
      const b = storage.open("https://b.example");
      expect(b.findAsset("sha-1")).toBeUndefined();
      expect(b.findJob("m/a", "h1")).toBeUndefined();
      b.close();
      const again = storage.open("https://a.example");
      expect(again.findAsset("sha-1")).toBe("101");
      expect(again.findJob("m/a", "h1")?.state).toBe("pending");
      again.close();
    });

    it("knows a service by its address however it is spelled, rows of older reels included", async () => {
      const storage = await makeHarness();
      // As an older reel recorded what the user typed.
      const old = storage.open("HTTPS://API.Example.com:443/");
      old.recordAsset("sha-1", "101", 10);
      old.close();
      for (const spelling of [
        "https://api.example.com",
        "https://API.example.com/",
        "HTTPS://api.example.com:443",
      ]) {
        const store = storage.open(spelling);
        expect(store.findAsset("sha-1"), spelling).toBe("101");
        store.close();
      }
      const other = storage.open("https://api.example.com:8443");
      expect(other.findAsset("sha-1")).toBeUndefined();
      other.close();
    });

    it("turns a submission without a recorded answer into an uncertain job at the next start", async () => {
      const storage = await makeHarness();
      const store = storage.open("https://a.example");
      const row = store.upsertJob(JOB);
      await store.markSubmitting(row.id);
      store.close();
      const next = storage.open("https://a.example");
      expect(next.markInterruptedSubmissionsUncertain()).toBe(1);
      const after = next.getJob(row.id);
      expect(after.state).toBe("uncertain");
      expect(after.attempts).toBe(1);
      next.close();
    });

    it("shows another reader (reel status) each turn's writes as soon as the turn ends", async () => {
      const storage = await makeHarness();
      const store = storage.open("x");
      const row = store.upsertJob(JOB);
      store.markSubmitting(row.id).catch(() => {});
      await new Promise((resolve) => setImmediate(resolve));
      store.markSubmitted(row.id, "42");
      await new Promise((resolve) => setImmediate(resolve));
      const reader = storage.openReader("x");
      expect(reader.getJob(row.id)).toMatchObject({ state: "submitted", task_id: "42" });
      reader.close();
      store.close();
    });

    it("forgets only unsent jobs a manifest no longer lists, and refuses an intent for a forgotten job", async () => {
      const storage = await makeHarness();
      const store = storage.open("x");
      const kept = store.upsertJob(JOB);
      const removed = store.upsertJob({ ...JOB, key: "m/b", videoId: "b" });
      const sent = store.upsertJob({ ...JOB, key: "m/c", videoId: "c" });
      const elsewhere = store.upsertJob({ ...JOB, key: "n/d", manifest: "n", videoId: "d" });
      await store.markSubmitting(sent.id);
      store.markRefused(sent.id, "503"); // pending again, nothing created: forgettable
      const paid = store.upsertJob({ ...JOB, key: "m/e", videoId: "e" });
      await store.markSubmitting(paid.id);
      store.markSubmitted(paid.id, "9");
      store.markFailed(paid.id, "task", "boom");
      store.markPending(paid.id, "--retry-failed"); // pending, but an attempt was paid for: kept

      expect(store.forgetUnsentJobs("m", new Set([`m/a\nh1`]))).toBe(2);
      const ids = store.listJobs().map((row) => row.id);
      expect(ids).toEqual([kept.id, elsewhere.id, paid.id]);
      await expect(store.markSubmitting(removed.id)).rejects.toThrow(/not in the state file/);
      store.close();
    });

    // Costed intents are compare-and-set: whatever fooled the lock, one job, speech or upload is
    // claimed once (see test/state/two-runners.test.ts for two real runners).
    it("claims a job for submission once: a row another process claimed is not sent again", async () => {
      const storage = await makeHarness();
      const store = storage.open("x");
      const row = store.upsertJob(JOB);
      store.flush();
      // The other process read the row pending too, and wrote its intent first.
      const other = storage.outside();
      other.claimJob(row.id);
      expect(await store.markSubmitting(row.id)).toBeNull();
      expect(store.getJob(row.id).attempts).toBe(1); // its attempt, not a second one
      store.flush(); // the turn's transaction, else the other writer waits on it
      // Its answer came: a --retry-failed or --resubmit-uncertain here must not make it pending again.
      other.answerJob(row.id, "77");
      expect(store.markPending(row.id, "--resubmit-uncertain")).toBe(false);
      expect(store.getJob(row.id)).toMatchObject({ state: "submitted", task_id: "77" });
      other.close();
      // The states a submission legitimately starts from are claimed, each claim naming its attempt.
      const fresh = store.upsertJob({ ...JOB, key: "m/b", videoId: "b" });
      expect(await store.markSubmitting(fresh.id)).toBe(1);
      store.markFailed(fresh.id, "local", "the file vanished");
      expect(await store.markSubmitting(fresh.id)).toBe(2);
      store.markUncertain(fresh.id, "lost answer");
      expect(await store.markSubmitting(fresh.id)).toBeNull();
      expect(store.markPending(fresh.id, "--resubmit-uncertain")).toBe(true);
      expect(await store.markSubmitting(fresh.id)).toBe(3);
      store.close();
    });

    it("makes one speech intent and one upload intent win", async () => {
      const storage = await makeHarness();
      const store = storage.open("x");
      store.flush();
      const other = storage.outside();
      other.startSpeech("17", "hello");
      other.startUpload("abc");
      other.close();
      await expect(store.markSpeechCreating("17", "hello")).rejects.toThrow(ClaimLostError);
      expect(() => store.markUploading("abc")).toThrow(ClaimLostError);
      // Its own intents, and a resubmission over an uncertain speech, are made.
      store.markSpeechUncertain("17", "hello", "lost");
      await store.markSpeechCreating("17", "hello");
      await store.markSpeechCreating("18", "hello");
      store.markUploading("def");
      store.markUploading("def"); // its own intent again (an upload retried in the same run)
      store.close();
    });
  });
}
