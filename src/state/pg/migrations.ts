// The PostgreSQL store's schema (see migrate.ts for how it is applied). The tables mirror the SQLite
// state file's (src/state/sqlite/migrations.ts), with times as epoch milliseconds (bigint) as there, plus
// what a fleet needs: the runners with their heartbeats, and on each claim the runner that holds it.
// The runner's id is the fencing token: a new one per process, and one marked lost never lives
// again, so a write that checks "held by me, and I am not lost" in its own statement or transaction
// keeps a runner paused past its lease from acting on work it no longer holds (sql/fleet.ts).
// (jobs.lease_epoch, of schema 1, was meant for that and stays unused.)
// The list is append-only history, as the state file's: never edit a step that has shipped, add the
// next. Each is written out whole, as it ran (repeating the columns of the tables it mirrors), never
// built from another step's text, which a later edit could change.
import { StateFileError } from "../../errors/state.js";
import type { PgMigrations } from "./migrate.js";

export const PG_MIGRATIONS: PgMigrations = {
  list: [
    // 1: the whole store.
    `
    CREATE TABLE services (
      id bigserial PRIMARY KEY,
      base_url text NOT NULL UNIQUE
    );

    -- A runner is one reel process: its lease on the work it claims lasts while its heartbeat does.
    CREATE TABLE runners (
      id bigserial PRIMARY KEY,
      host text NOT NULL,
      pid integer NOT NULL,
      started_at bigint NOT NULL,
      heartbeat_at bigint NOT NULL,
      concurrency integer NOT NULL,
      stopped_at bigint
    );

    CREATE TABLE jobs (
      id bigserial PRIMARY KEY,
      service_id bigint NOT NULL REFERENCES services(id),
      job_key text NOT NULL,
      manifest text NOT NULL,
      video_id text NOT NULL,
      spec_hash text NOT NULL,
      spec_json text NOT NULL,
      seconds integer NOT NULL,
      model text NOT NULL,
      state text NOT NULL,
      fail_kind text,
      attempts integer NOT NULL DEFAULT 0,
      task_id text,
      task_status text,
      result_url text,
      file text,
      out_dir text,
      file_size bigint,
      file_sha256 text,
      file_stamp text,
      error text,
      created_at bigint NOT NULL,
      submitted_at bigint,
      running_at bigint,
      finished_at bigint,
      downloaded_at bigint,
      updated_at bigint NOT NULL,
      -- The runner that holds the job (claimed it, or follows its task).
      runner_id bigint REFERENCES runners(id),
      lease_epoch bigint,
      UNIQUE (service_id, job_key, spec_hash)
    );
    CREATE INDEX jobs_unfinished ON jobs (service_id) WHERE state IN ('submitting', 'submitted');

    CREATE TABLE assets (
      service_id bigint NOT NULL REFERENCES services(id),
      sha256 text NOT NULL,
      asset_id text NOT NULL,
      size bigint NOT NULL,
      uploaded_at bigint NOT NULL,
      PRIMARY KEY (service_id, sha256)
    );

    CREATE TABLE upload_intents (
      service_id bigint NOT NULL REFERENCES services(id),
      sha256 text NOT NULL,
      started_at bigint NOT NULL,
      runner_id bigint REFERENCES runners(id),
      PRIMARY KEY (service_id, sha256)
    );

    CREATE TABLE speech (
      service_id bigint NOT NULL REFERENCES services(id),
      voice_id text NOT NULL,
      text text NOT NULL,
      state text NOT NULL,
      asset_id text,
      duration double precision,
      error text,
      updated_at bigint NOT NULL,
      runner_id bigint REFERENCES runners(id),
      PRIMARY KEY (service_id, voice_id, text)
    );

    -- Caches of one machine's files: keyed by host, as paths mean nothing on another machine.
    CREATE TABLE file_hashes (
      host text NOT NULL,
      path text NOT NULL,
      size bigint NOT NULL,
      mtime_ns text NOT NULL,
      ctime_ns text,
      ino text,
      sha256 text NOT NULL,
      PRIMARY KEY (host, path)
    );
    CREATE TABLE remote_files (
      host text NOT NULL,
      url text NOT NULL,
      sha256 text NOT NULL,
      path text NOT NULL,
      size bigint NOT NULL,
      PRIMARY KEY (host, url)
    );

    CREATE TABLE events (
      id bigserial PRIMARY KEY,
      at bigint NOT NULL,
      job_id bigint,
      runner_id bigint,
      kind text NOT NULL,
      detail text
    );
    `,
    // 2: the fleet's leases. A runner works for one service (its bound is that service's), and one
    // found silent past its lease is marked lost, by the runner that took its work over: from then on
    // every write that needs its lease (a claim, an answer, a poll's status) is refused to it.
    // connected_at: since when the runner has been heard from without a gap (sql/fleet.ts: a silence
    // counts only while someone could reach the database).
    `
    ALTER TABLE runners ADD COLUMN service_id bigint REFERENCES services(id);
    ALTER TABLE runners ADD COLUMN connected_at bigint;
    UPDATE runners SET connected_at = started_at;
    ALTER TABLE runners ADD COLUMN lost_at bigint;
    ALTER TABLE runners ADD COLUMN taken_by bigint;
    CREATE INDEX runners_live ON runners (service_id) WHERE stopped_at IS NULL;
    CREATE INDEX jobs_held ON jobs (runner_id) WHERE runner_id IS NOT NULL;
    CREATE INDEX jobs_uncertain ON jobs (service_id, updated_at) WHERE state = 'uncertain';
    `,
    // 3: the budget of a capped run, as the state file's migration 7 (src/state/sqlite/migrations.ts). A
    // session belongs to one runner (migration 6): in a fleet each runner counts its own.
    `
    CREATE TABLE budget_sessions (
      id bigserial PRIMARY KEY,
      service_id bigint NOT NULL REFERENCES services(id),
      scope text NOT NULL,
      host text NOT NULL,
      pid integer NOT NULL,
      started_at bigint NOT NULL,
      ended_at bigint
    );
    CREATE INDEX budget_sessions_open ON budget_sessions (service_id, scope) WHERE ended_at IS NULL;
    CREATE TABLE spend (
      id bigserial PRIMARY KEY,
      session_id bigint NOT NULL REFERENCES budget_sessions(id),
      job_id bigint,
      attempt integer,
      speech text,
      model text,
      resolution text,
      seconds double precision NOT NULL,
      at bigint NOT NULL
    );
    CREATE UNIQUE INDEX spend_once ON spend (session_id, job_id, attempt) WHERE job_id IS NOT NULL;
    `,
    // 4: what the runners learned of the service's run times, as the state file's migration 8.
    `
    CREATE TABLE learned (
      service_id bigint PRIMARY KEY REFERENCES services(id),
      run_times text NOT NULL,
      updated_at bigint NOT NULL
    );
    `,
    // 5: what each charge cost when it was sent, as the state file's migration 9.
    `
    ALTER TABLE spend ADD COLUMN credits double precision;
    `,
    // 6: the runner that runs a budget session. Its heartbeats and lease say whether it still runs;
    // a host name and a pid cannot (another machine, a container restarted in a new PID namespace).
    // Sessions of earlier reels get the runner their host and pid name, if any.
    `
    ALTER TABLE budget_sessions ADD COLUMN runner_id bigint REFERENCES runners(id);
    UPDATE budget_sessions s SET runner_id = (
      SELECT max(r.id) FROM runners r WHERE r.host = s.host AND r.pid = s.pid AND r.started_at <= s.started_at);
    `,
    // 7: the jobs by task id, as the state file's migration 10.
    `
    CREATE INDEX jobs_by_task ON jobs (service_id, task_id) WHERE task_id IS NOT NULL;
    `,
    // 8: where a runner's pid means its process (src/state/pid-space.ts): a runner whose process is
    // gone is taken over at once only from its own pid space, never by its host name alone (two
    // machines may share one). NULL on rows of earlier reels: their lease decides. lost_why: why a
    // lost runner was taken for lost ('silent' past its lease, or its process 'gone'), for the
    // message it and the runner that took it over say.
    `
    ALTER TABLE runners ADD COLUMN pid_space text;
    ALTER TABLE runners ADD COLUMN lost_why text;
    `,
    // 9: the manifests run into each output folder, as the state file's migration 11. A path names a
    // folder of the machine that wrote it: the runners of one folder share its list.
    `
    CREATE TABLE out_manifests (
      out_dir text NOT NULL,
      manifest text NOT NULL,
      PRIMARY KEY (out_dir, manifest)
    );
    INSERT INTO out_manifests (out_dir, manifest)
      SELECT DISTINCT out_dir, manifest FROM jobs WHERE out_dir IS NOT NULL
      ON CONFLICT DO NOTHING;
    `,
    // 10: reviewers' decisions on takes, as the state file's migration 12.
    `
    CREATE TABLE decisions (
      id bigserial PRIMARY KEY,
      service_id bigint NOT NULL REFERENCES services(id),
      job_key text NOT NULL,
      spec_hash text NOT NULL,
      decision text NOT NULL CHECK (decision IN ('approved', 'rejected', 'cleared')),
      reviewer text NOT NULL,
      note text,
      decided_at bigint NOT NULL
    );
    CREATE INDEX decisions_by_version ON decisions (service_id, job_key, spec_hash, id);
    `,
    // 11: retakes, as the state file's migration 13.
    `
    CREATE TABLE retakes (
      id bigserial PRIMARY KEY,
      service_id bigint NOT NULL REFERENCES services(id),
      job_key text NOT NULL,
      manifest text NOT NULL,
      video_id text NOT NULL,
      spec_hash text NOT NULL,
      from_key text NOT NULL,
      from_spec_hash text NOT NULL,
      reviewer text NOT NULL,
      note text,
      queued_at bigint NOT NULL,
      withdrawn_at bigint,
      UNIQUE (service_id, job_key)
    );
    CREATE INDEX retakes_by_manifest ON retakes (service_id, manifest);
    `,
    // 12: named budgets, as the state file's migration 14. A runner of an earlier reel refuses the
    // store from here on (its schema is newer than it knows): it would pay past a budget it cannot see.
    `
    CREATE TABLE budgets (
      id bigserial PRIMARY KEY,
      name text NOT NULL UNIQUE,
      max_seconds double precision,
      max_credits double precision,
      prices_file text,
      prices_json text,
      spent_seconds double precision NOT NULL DEFAULT 0,
      spent_credits double precision NOT NULL DEFAULT 0,
      created_at bigint NOT NULL,
      updated_at bigint NOT NULL
    );
    CREATE TABLE budget_charges (
      id bigserial PRIMARY KEY,
      budget_id bigint NOT NULL REFERENCES budgets(id),
      job_id bigint,
      attempt integer,
      speech text,
      seconds double precision NOT NULL,
      credits double precision NOT NULL,
      at bigint NOT NULL
    );
    CREATE UNIQUE INDEX budget_charges_once ON budget_charges (budget_id, job_id, attempt) WHERE job_id IS NOT NULL;
    CREATE INDEX budget_charges_speech ON budget_charges (speech) WHERE speech IS NOT NULL;
    `,
    // 13: the event stream, as the state file's migration 15. `runner` names the process ("host:pid")
    // where runner_id cannot (a reviewer has no runner); rows of earlier reels are read through
    // runner_id and the job's row.
    `
    ALTER TABLE events ADD COLUMN job_key text;
    ALTER TABLE events ADD COLUMN task_id text;
    ALTER TABLE events ADD COLUMN runner text;
    `,
    // 14: when a job became uncertain, by the database's clock (the jobs' own times are their
    // writers'): an uncertain submission holds its slot of the account for the hold on one clock,
    // whatever the runners' machines say (sql/claims.ts FULL). Set by the database itself, in every
    // statement that makes a job uncertain (a runner's, a takeover's), so no writer can forget it.
    `
    ALTER TABLE jobs ADD COLUMN uncertain_at bigint;
    UPDATE jobs SET uncertain_at = updated_at WHERE state = 'uncertain';
    CREATE FUNCTION reel_uncertain_at() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        NEW.uncertain_at := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
        RETURN NEW;
      END
    $fn$;
    CREATE TRIGGER jobs_uncertain_at BEFORE UPDATE OF state ON jobs FOR EACH ROW
      WHEN (NEW.state = 'uncertain' AND OLD.state IS DISTINCT FROM 'uncertain')
      EXECUTE FUNCTION reel_uncertain_at();
    DROP INDEX jobs_uncertain;
    CREATE INDEX jobs_uncertain_since ON jobs (service_id, uncertain_at) WHERE state = 'uncertain';
    `,
    // 15: the highest share of a named budget's caps told, as the state file's migration 16.
    `
    ALTER TABLE budgets ADD COLUMN noticed_percent integer NOT NULL DEFAULT 0;
    `,
    // 16: whether the account's bound is full (sql/claims.ts), as a function so that a claim is one
    // statement: VOLATILE (and plpgsql, never inlined), each call reads what was committed when it
    // runs, after the claim was given its service's row, not when the statement began (READ
    // COMMITTED). Unfinished: submitting, submitted, and uncertain for the hold ($2 ms, by the
    // database's clock as the lease is); the bound: the smallest --concurrency of the service's
    // live runners (heard within the lease, $3 ms).
    `
    CREATE FUNCTION reel_bound_full(bigint, bigint, bigint) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        now_ms bigint := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
      BEGIN
        RETURN coalesce(
          (SELECT count(*) FROM jobs WHERE service_id = $1
             AND (state IN ('submitting', 'submitted') OR (state = 'uncertain' AND uncertain_at >= now_ms - $2)))
          >= (SELECT min(concurrency) FROM runners WHERE service_id = $1 AND concurrency > 0
             AND stopped_at IS NULL AND heartbeat_at >= now_ms - $3),
          false);
      END
    $fn$;
    `,
    // 17: a named budget's refusal of a charge (sql/named-budgets.ts), as an error, so that a claim
    // and its spend are one statement: the error undoes the claim the statement made. `$1`: the
    // budget's row as the refusal found it (JSON), for the error the runner makes of it.
    `
    CREATE FUNCTION reel_budget_refused(text) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $fn$
      BEGIN
        RAISE EXCEPTION 'the named budget has no room for the charge' USING ERRCODE = 'RB001', DETAIL = $1;
      END
    $fn$;
    `,
    // 18: who follows every runner's events (reel events --follow: pg/event-notices.ts), each until
    // \`until_at\` (the database's clock, ms) unless renewed: a runner's heartbeat reads whether one
    // does, and only then tells its commits of events (NOTIFY reel_events).
    `
    CREATE TABLE event_followers (
      id bigserial PRIMARY KEY,
      until_at bigint NOT NULL
    );
    `,
    // 19: which other job of service $1 holds task $2 (sql/claims.ts answerJob), as a function so
    // that an answer is one statement: the answers naming one task wait for each other on the
    // advisory lock it takes, and its look-up (VOLATILE plpgsql) reads what was committed once the
    // lock was granted, not when the statement began: the answer recorded first is seen.
    `
    CREATE FUNCTION reel_task_holder(bigint, text, bigint) RETURNS text LANGUAGE plpgsql VOLATILE AS $fn$
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtextextended($1::text || ' ' || $2, 0));
        RETURN (SELECT job_key FROM jobs WHERE service_id = $1 AND task_id = $2 AND id <> $3 LIMIT 1);
      END
    $fn$;
    `,
  ],
  tooNew: (version) =>
    new StateFileError(
      `the store's schema is version ${version}, newer than this reel knows (${PG_MIGRATIONS.list.length}): a newer reel uses it; upgrade reel`,
    ),
};
