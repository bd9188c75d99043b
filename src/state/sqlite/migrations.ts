// Numbered migrations of the state file, each applied in its own transaction. Never edit a migration
// that has shipped: add the next number. `PRAGMA user_version` records how far a file has come.
// The list is append-only history: each step is written out whole, as it ran, so a new table spells
// its columns afresh where they repeat an older one's; a step is never built from another's text,
// which a later edit could change.

export const MIGRATIONS: readonly string[] = [
  // 1: the first schema.
  `
  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;

  -- Asset ids of one service mean nothing on another: every service row is scoped by base URL.
  CREATE TABLE services (
    id INTEGER PRIMARY KEY,
    base_url TEXT NOT NULL UNIQUE
  ) STRICT;

  -- One row per job version: identity is (manifest, video id); editing the spec makes a new row.
  -- state: pending | submitting (intent written, no answer yet) | submitted (task id known)
  --        | Success | Fail | Canceled | uncertain
  CREATE TABLE jobs (
    id INTEGER PRIMARY KEY,
    service_id INTEGER NOT NULL REFERENCES services(id),
    job_key TEXT NOT NULL,
    manifest TEXT NOT NULL,
    video_id TEXT NOT NULL,
    spec_hash TEXT NOT NULL,
    spec_json TEXT NOT NULL,
    seconds INTEGER NOT NULL,
    model TEXT NOT NULL,
    state TEXT NOT NULL,
    -- local: failed before anything was sent (retried freely); rejected: 422; task: the task ended Fail
    fail_kind TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    task_id TEXT,
    task_status TEXT,
    result_url TEXT,
    file TEXT,
    error TEXT,
    created_at INTEGER NOT NULL,
    submitted_at INTEGER,
    running_at INTEGER,
    finished_at INTEGER,
    downloaded_at INTEGER,
    updated_at INTEGER NOT NULL,
    UNIQUE (service_id, job_key, spec_hash)
  ) STRICT;
  CREATE INDEX jobs_by_state ON jobs (service_id, state);

  CREATE TABLE assets (
    service_id INTEGER NOT NULL REFERENCES services(id),
    sha256 TEXT NOT NULL,
    asset_id TEXT NOT NULL,
    size INTEGER NOT NULL,
    uploaded_at INTEGER NOT NULL,
    PRIMARY KEY (service_id, sha256)
  ) STRICT;

  -- Speech is a costed call: the intent row is written before the call, the asset id after.
  CREATE TABLE speech (
    service_id INTEGER NOT NULL REFERENCES services(id),
    voice_id TEXT NOT NULL,
    text TEXT NOT NULL,
    state TEXT NOT NULL, -- creating | done | uncertain
    asset_id TEXT,
    duration REAL,
    error TEXT,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (service_id, voice_id, text)
  ) STRICT;

  -- Content hashes of local files, so unchanged files are not read again.
  CREATE TABLE file_hashes (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns TEXT NOT NULL,
    sha256 TEXT NOT NULL
  ) STRICT;

  -- Remote sources, fetched once into the local cache.
  CREATE TABLE remote_files (
    url TEXT PRIMARY KEY,
    sha256 TEXT NOT NULL,
    path TEXT NOT NULL,
    size INTEGER NOT NULL
  ) STRICT;

  CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    job_id INTEGER,
    kind TEXT NOT NULL,
    detail TEXT
  ) STRICT;
  `,
  // 2: upload intents, so an upload cut off by a crash is known (and reported) at the next start.
  `
  CREATE TABLE upload_intents (
    service_id INTEGER NOT NULL REFERENCES services(id),
    sha256 TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    PRIMARY KEY (service_id, sha256)
  ) STRICT;
  `,
  // 3: no index on job state. Every state change (three per video) rewrote its pages; the queries by
  // state run once per run and scan the service's rows in milliseconds, even with 10,000 jobs.
  `
  DROP INDEX IF EXISTS jobs_by_state;
  `,
  // 4: the output folder a job's file lies in (absolute). One state file may serve several output
  // folders: a video in one is not the video of another's file of the same name. NULL on rows of
  // earlier reels: taken to be in whatever folder the run writes to, as they were.
  `
  ALTER TABLE jobs ADD COLUMN out_dir TEXT;
  `,
  // 5: a file's ctime and inode join its size and mtime in the key of its cached hash. A file replaced
  // by one of the same size with its mtime kept (cp -p, rsync -a, touch -r) still gets a new ctime,
  // and a new inode when moved into place: git's index looks at them for the same reason. Rows of
  // earlier reels (NULL) match nothing: each file is read once more.
  `
  ALTER TABLE file_hashes ADD COLUMN ctime_ns TEXT;
  ALTER TABLE file_hashes ADD COLUMN ino TEXT;
  `,
  // 6: what a job's video held when reel wrote it (size, SHA-256) and the stamp it had then
  // ("mtime_ns:ctime_ns:ino"), so a rerun tells a video cut short or replaced from the one it saved:
  // the size is compared always, the content hashed again only when the stamp changed. NULL on
  // videos of earlier reels: only their first bytes are checked, as before.
  `
  ALTER TABLE jobs ADD COLUMN file_size INTEGER;
  ALTER TABLE jobs ADD COLUMN file_sha256 TEXT;
  ALTER TABLE jobs ADD COLUMN file_stamp TEXT;
  `,
  // 7: the budget of a capped run (--max-seconds, --max-credits; src/budget). A session is one run,
  // or one watch, and the runs that resume it after a stop before its end; `spend` holds what it
  // sent that may cost: each submission (written with its intent, in the same transaction) and each
  // speech call. (What each cost: migration 9.)
  `
  CREATE TABLE budget_sessions (
    id INTEGER PRIMARY KEY,
    service_id INTEGER NOT NULL REFERENCES services(id),
    scope TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started_at INTEGER NOT NULL,
    ended_at INTEGER
  ) STRICT;
  CREATE INDEX budget_sessions_open ON budget_sessions (service_id, scope) WHERE ended_at IS NULL;
  CREATE TABLE spend (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES budget_sessions(id),
    job_id INTEGER,
    attempt INTEGER,
    speech TEXT,
    model TEXT,
    resolution TEXT,
    seconds REAL NOT NULL,
    at INTEGER NOT NULL
  ) STRICT;
  CREATE UNIQUE INDEX spend_once ON spend (session_id, job_id, attempt) WHERE job_id IS NOT NULL;
  `,
  // 8: what reel learned of the service's run times (engine/run-times.ts), per service: a new run
  // places its polls from the start as the last one learned.
  `
  CREATE TABLE learned (
    service_id INTEGER PRIMARY KEY REFERENCES services(id),
    run_times TEXT NOT NULL,
    updated_at INTEGER NOT NULL
  ) STRICT;
  `,
  // 9: the credits each charge of the ledger cost at the prices of the moment it was sent, so that
  // a price changed since does not change what was spent. NULL where no price was known then (no
  // price list, or charges of earlier reels): those are priced when read.
  `
  ALTER TABLE spend ADD COLUMN credits REAL;
  `,
  // 10: the jobs by task id, so that an answer naming a task another job holds is told at once (a
  // fault of the service: see JobRecords.markSubmitted). Not unique: a file may hold such pairs
  // from before, and an index rewritten only when a task id changes costs little.
  `
  CREATE INDEX jobs_by_task ON jobs (service_id, task_id) WHERE task_id IS NOT NULL;
  `,
  // 11: the manifests run into each output folder (named as jobs.out_dir names it), so that its
  // reports (results.jsonl, index.html) list every video in it, not only the last run's; `reel
  // forget` drops one. Not scoped by service: the folder holds what any service made. Filled from
  // the videos recorded so far.
  `
  CREATE TABLE out_manifests (
    out_dir TEXT NOT NULL,
    manifest TEXT NOT NULL,
    PRIMARY KEY (out_dir, manifest)
  ) STRICT;
  INSERT OR IGNORE INTO out_manifests (out_dir, manifest)
    SELECT DISTINCT out_dir, manifest FROM jobs WHERE out_dir IS NOT NULL;
  `,
  // 12: reviewers' decisions on takes (ReviewRecords in job-store.ts): every decision on a job version
  // is kept, the latest counts. Keyed by the version (key, spec hash), not the job's row: a row
  // forgotten and made again, or rebuilt from the records, keeps its decisions. Written by
  // `reel approve` and the review page beside a run that holds the file (see docs/review.md).
  `
  CREATE TABLE decisions (
    id INTEGER PRIMARY KEY,
    service_id INTEGER NOT NULL REFERENCES services(id),
    job_key TEXT NOT NULL,
    spec_hash TEXT NOT NULL,
    decision TEXT NOT NULL CHECK (decision IN ('approved', 'rejected', 'cleared')),
    reviewer TEXT NOT NULL,
    note TEXT,
    decided_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX decisions_by_version ON decisions (service_id, job_key, spec_hash, id);
  `,
  // 13: retakes (reel retake): each asks for one more take of a video, whose job is added unsent in
  // the same transaction and is claimed as any job is (so it is paid once). job_key is the new take's
  // (unique: a take number is never given twice, a withdrawn one's neither); from_* the take retaken.
  `
  CREATE TABLE retakes (
    id INTEGER PRIMARY KEY,
    service_id INTEGER NOT NULL REFERENCES services(id),
    job_key TEXT NOT NULL,
    manifest TEXT NOT NULL,
    video_id TEXT NOT NULL,
    spec_hash TEXT NOT NULL,
    from_key TEXT NOT NULL,
    from_spec_hash TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    note TEXT,
    queued_at INTEGER NOT NULL,
    withdrawn_at INTEGER,
    UNIQUE (service_id, job_key)
  ) STRICT;
  CREATE INDEX retakes_by_manifest ON retakes (service_id, manifest);
  `,
  // 14: named budgets (reel budget set; NamedBudgetRecords in job-store.ts): one cap shared by every
  // run that names it. The counters are what the check reads and moves, in the transaction of the
  // intent that spends (a claim, a speech intent); `budget_charges` keeps each charge, so that a
  // refund gives back exactly it, and a charge met again is spent once. Not scoped by service: the
  // money is the team's. A reel that does not know this schema refuses the file (it would pay past
  // a budget it cannot see).
  `
  CREATE TABLE budgets (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    max_seconds REAL,
    max_credits REAL,
    prices_file TEXT,
    prices_json TEXT,
    spent_seconds REAL NOT NULL DEFAULT 0,
    spent_credits REAL NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  ) STRICT;
  CREATE TABLE budget_charges (
    id INTEGER PRIMARY KEY,
    budget_id INTEGER NOT NULL REFERENCES budgets(id),
    job_id INTEGER,
    attempt INTEGER,
    speech TEXT,
    seconds REAL NOT NULL,
    credits REAL NOT NULL,
    at INTEGER NOT NULL
  ) STRICT;
  CREATE UNIQUE INDEX budget_charges_once ON budget_charges (budget_id, job_id, attempt) WHERE job_id IS NOT NULL;
  CREATE INDEX budget_charges_speech ON budget_charges (speech) WHERE speech IS NOT NULL;
  `,
  // 15: the event stream (src/events, docs/events.md): each event names the job's key and task id as
  // they were when it was recorded (a later submission of the job has another task), and the process
  // that recorded it. NULL on rows of earlier reels: read with the job's current key.
  `
  ALTER TABLE events ADD COLUMN job_key TEXT;
  ALTER TABLE events ADD COLUMN task_id TEXT;
  ALTER TABLE events ADD COLUMN runner TEXT;
  `,
  // 16: the highest share (80, 100) of a named budget's caps told (notifications): each is told once
  // in the budget's life, by the write that claims it; `reel budget set` raising a cap arms again the
  // shares above what was spent.
  `
  ALTER TABLE budgets ADD COLUMN noticed_percent INTEGER NOT NULL DEFAULT 0;
  `,
];
