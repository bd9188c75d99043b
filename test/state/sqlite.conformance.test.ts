// The state store conformance suite (conformance.ts) on the SQLite state file: a fresh file per test.
import { join } from "node:path";
import Database from "better-sqlite3";
import { openBudgetStore, openJobStore, openReviewStore } from "../../src/state/open-job-store.js";
import { tempDir } from "../helpers/temp-dir.js";
import { describeStoreConformance, type StoreHarness } from "./conformance.js";

async function sqliteStorage(): Promise<StoreHarness> {
  const path = join(await tempDir(), "state.db");
  return {
    open: (baseUrl) => openJobStore(path, { baseUrl }),
    openReader: (baseUrl) => openJobStore(path, { readonly: true, baseUrl }),
    openReaderOfAll: () => openJobStore(path, { readonly: true }),
    openReviewer: (baseUrl) => openReviewStore(path, { baseUrl }),
    openBudgets: () => openBudgetStore(path),
    outside: () => {
      // A second writer of the same file that no lock stops, as a reel that the lock did not see would be.
      const db = new Database(path);
      db.pragma("busy_timeout = 5000");
      return {
        async claimJob(id) {
          db.prepare("UPDATE jobs SET state = 'submitting', attempts = attempts + 1 WHERE id = ?").run(id);
        },
        async answerJob(id, taskId) {
          db.prepare("UPDATE jobs SET state = 'submitted', task_id = ? WHERE id = ?").run(taskId, id);
        },
        async startSpeech(voiceId, text) {
          db.prepare(
            "INSERT INTO speech (service_id, voice_id, text, state, updated_at) VALUES (1, ?, ?, 'creating', 1)",
          ).run(voiceId, text);
        },
        async startUpload(sha256) {
          db.prepare("INSERT INTO upload_intents (service_id, sha256, started_at) VALUES (1, ?, 1)").run(
            sha256,
          );
        },
        async close() {
          db.close();
        },
      };
    },
  };
}

describeStoreConformance("SQLite", sqliteStorage);
