// The state store conformance suite (conformance.ts) on the PostgreSQL store: a fresh database per
// test, on the server test/global-setup.ts found (skipped with a line saying why where there is
// none, except in CI, where the PostgreSQL tests must run).
import pg from "pg";
import { describe } from "vitest";
import { openBudgetStore, openReviewStore } from "../../src/state/open-job-store.js";
import { PgStore } from "../../src/state/pg/store.js";
import { hasPostgres, usePostgres } from "../helpers/postgres.js";
import { describeStoreConformance, type StoreHarness } from "./conformance.js";

const database = usePostgres();

async function pgStorage(): Promise<StoreHarness> {
  const url = await database();
  return {
    open: (baseUrl) => PgStore.open(url, { baseUrl }),
    openReader: (baseUrl) => PgStore.open(url, { baseUrl, readonly: true }),
    openReaderOfAll: () => PgStore.open(url, { readonly: true }),
    openReviewer: (baseUrl) => openReviewStore("", { baseUrl }, url),
    openBudgets: () => openBudgetStore("", url),
    outside: () => {
      // Another runner's writes, straight to the database, racing the store's own.
      const client = new pg.Client({ connectionString: url });
      const connected = client.connect();
      const run = async (text: string, values: unknown[]): Promise<void> => {
        await connected;
        await client.query(text, values);
      };
      const firstService = "(SELECT min(id) FROM services)";
      return {
        claimJob: (id) =>
          run("UPDATE jobs SET state = 'submitting', attempts = attempts + 1 WHERE id = $1", [id]),
        answerJob: (id, taskId) =>
          run("UPDATE jobs SET state = 'submitted', task_id = $2 WHERE id = $1", [id, taskId]),
        startSpeech: (voiceId, text) =>
          run(
            `INSERT INTO speech (service_id, voice_id, text, state, updated_at) VALUES (${firstService}, $1, $2, 'creating', 1)`,
            [voiceId, text],
          ),
        startUpload: (sha256) =>
          run(`INSERT INTO upload_intents (service_id, sha256, started_at) VALUES (${firstService}, $1, 1)`, [
            sha256,
          ]),
        close: async () => {
          await connected.catch(() => {});
          await client.end();
        },
      };
    },
  };
}

if (hasPostgres()) describeStoreConformance("PostgreSQL", pgStorage);
else describe.skip("state store conformance: PostgreSQL", () => {});
