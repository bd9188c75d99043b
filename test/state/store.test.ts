// The SQLite state file as a user relies on it: its group commit (an intent on disk before the request
// leaves, a failed write undoing only itself), refusing foreign or damaged files with a clear message
// instead of recreating them, and locked to one process at a time. What every backend must do
// (scoped per service, intents compare-and-set...) is in conformance.ts.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { StateLockedError, StateFileError } from "../../src/errors/state.js";
import { MIGRATIONS } from "../../src/state/sqlite/migrations.js";
import { openReviewStore } from "../../src/state/open-job-store.js";
import { StateStore } from "../../src/state/sqlite/store.js";
import { failDownloadRecords } from "../helpers/state-faults.js";
import { tempDir } from "../helpers/temp-dir.js";
import { JOB, seedJob } from "../helpers/seed-jobs.js";

describe("state store", () => {
  it("upgraded, knows the manifests of each output folder from the videos it recorded there", async () => {
    const path = join(await tempDir(), "state.db");
    // Schema 10: two manifests with a video in /work/out, one failed before any video.
    const old = new Database(path);
    old.pragma("journal_mode = WAL");
    for (const sql of MIGRATIONS.slice(0, 10)) old.exec(sql);
    old.prepare("INSERT INTO meta (key, value) VALUES ('app', 'reel-state')").run();
    old.prepare("INSERT INTO services (base_url) VALUES ('https://a.example')").run();
    const insert = old.prepare(
      `INSERT INTO jobs (service_id, job_key, manifest, video_id, spec_hash, spec_json, seconds, model, state, file, out_dir, created_at, updated_at)
       VALUES (1, ?, ?, 'a', 'h1', '{}', 5, 'actor-2', ?, ?, ?, 1, 1)`,
    );
    insert.run("promo/a", "promo", "Success", "promo/a.mp4", "/work/out");
    insert.run("broll/a", "broll", "Success", "broll/a.mp4", "/work/out");
    insert.run("spring/a", "spring", "Fail", null, null);
    old.pragma("user_version = 10");
    old.close();

    const store = StateStore.open(path, { baseUrl: "https://a.example" });
    expect(await store.outManifests("/work/out")).toEqual(["broll", "promo"]);
    await store.close();
  });

  it("upgrades a state file of an earlier schema in place, keeping its jobs", async () => {
    const path = join(await tempDir(), "state.db");
    // A file as the previous release left it: schema 2, one job in flight.
    const old = new Database(path);
    old.pragma("journal_mode = WAL");
    for (const sql of MIGRATIONS.slice(0, 2)) old.exec(sql);
    old.prepare("INSERT INTO meta (key, value) VALUES ('app', 'reel-state')").run();
    old.prepare("INSERT INTO services (base_url) VALUES ('https://a.example')").run();
    old
      .prepare(
        `INSERT INTO jobs (service_id, job_key, manifest, video_id, spec_hash, spec_json, seconds, model, state, task_id, created_at, updated_at)
         VALUES (1, 'm/a', 'm', 'a', 'h1', '{}', 5, 'actor-2', 'submitted', '77', 1, 1)`,
      )
      .run();
    old.pragma("user_version = 2");
    old.close();

    const store = StateStore.open(path, { baseUrl: "https://a.example" });
    expect((await store.listInFlight()).map((row) => [row.job_key, row.task_id])).toEqual([["m/a", "77"]]);
    await store.close();
    const check = new Database(path, { readonly: true });
    expect(check.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
    expect(
      check.prepare("SELECT name FROM sqlite_master WHERE name = 'jobs_by_state'").get(),
    ).toBeUndefined();
    check.close();
  });

  it("opens a reviewer beside the run that holds the file, and makes no file nor service of its own", async () => {
    const dir = await tempDir();
    const path = join(dir, "state.db");
    await expect(openReviewStore(path, { baseUrl: "https://a.example" })).rejects.toThrow(
      `no state file at ${path}`,
    );
    expect(existsSync(path)).toBe(false);
    const run = StateStore.open(path, { baseUrl: "https://a.example" });
    await seedJob(run, JOB);
    await run.flush();
    // The run holds the file's lock; a second run is refused, a reviewer is not.
    expect(() => StateStore.open(path, { baseUrl: "https://a.example" })).toThrow(StateLockedError);
    const reviewer = await openReviewStore(path, { baseUrl: "https://a.example" });
    await reviewer.recordDecisions([{ key: "m/a", specHash: "h1", decision: "approved", reviewer: "ana" }]);
    await reviewer.close();
    await expect(openReviewStore(path, { baseUrl: "https://b.example" })).rejects.toThrow(
      "has no jobs of https://b.example",
    );
    // Still the run's: its lock held, its writes go on, and it reads what the reviewer recorded.
    expect(() => StateStore.open(path, { baseUrl: "https://a.example" })).toThrow(StateLockedError);
    await run.markSubmitting((await run.findJob("m/a", "h1"))!.id);
    expect((await run.latestDecisions()).map((d) => d.reviewer)).toEqual(["ana"]);
    await run.close();
    const check = new Database(path, { readonly: true });
    expect(check.prepare("SELECT base_url FROM services").all()).toEqual([{ base_url: "https://a.example" }]);
    check.close();
  });

  it("has an intent in the file before markSubmitting resolves, even if the process is then killed", async () => {
    const path = join(await tempDir(), "state.db");
    // The child records the intent, then writes the answer and dies in the same turn of its event
    // loop: the answer never reaches the file, the intent must (dist/ is built by npm test).
    const storeModule = new URL("../../dist/state/sqlite/store.js", import.meta.url).href;
    const script = `const { StateStore } = await import(${JSON.stringify(storeModule)});
      const store = StateStore.open(${JSON.stringify(path)}, { baseUrl: "x" });
      const [row] = await store.upsertJobs([${JSON.stringify(JOB)}]);
      await store.markSubmitting(row.id);
      store.markSubmitted(row.id, "77");
      process.kill(process.pid, "SIGKILL");`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "inherit" });
    const signal = await new Promise((resolve) => child.on("exit", (_code, sig) => resolve(sig)));
    expect(signal).toBe("SIGKILL");
    const store = StateStore.open(path, { baseUrl: "x" });
    expect((await store.findJob(JOB.key, JOB.specHash))?.state).toBe("submitting");
    expect(await store.markInterruptedSubmissionsUncertain()).toBe(1);
    await store.close();
  });

  it("commits the last turn of a process that exits without closing its store once the CLI set its exit hook, and not on import alone", async () => {
    const storeModule = new URL("../../dist/state/sqlite/store.js", import.meta.url).href;
    const mainModule = new URL("../../dist/cli/main.js", import.meta.url).href;
    /** A child that writes a job and exits in the same turn, without closing; whether the job is there after. */
    const writtenAtExit = async (setUp: string): Promise<boolean> => {
      const path = join(await tempDir(), "state.db");
      const script = `${setUp}
        const { StateStore } = await import(${JSON.stringify(storeModule)});
        const store = StateStore.open(${JSON.stringify(path)}, { baseUrl: "x" });
        store.upsertJobs([${JSON.stringify(JOB)}]);
        process.exit(0);`;
      const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
        stdio: ["ignore", "ignore", "inherit"],
      });
      expect(await new Promise((resolve) => child.on("exit", resolve))).toBe(0);
      const store = StateStore.open(path, { baseUrl: "x" });
      try {
        return (await store.notRecorded([JOB])).length === 0;
      } finally {
        await store.close();
      }
    };
    // Importing the store registers nothing on the process (a library must not).
    expect(await writtenAtExit("")).toBe(false);
    // The CLI's main registers the hook (a second Ctrl-C exits at once, src/cli/main.ts).
    expect(
      await writtenAtExit(
        `const { main } = await import(${JSON.stringify(mainModule)}); await main(["--version"]);`,
      ),
    ).toBe(true);
  });

  it("refuses every write, and rejects the intent waiting on its turn, once SQLite undid a whole turn", async () => {
    const path = join(await tempDir(), "state.db");
    const store = StateStore.open(path, { baseUrl: "x" });
    const a = await seedJob(store, JOB);
    const b = await seedJob(store, { ...JOB, key: "m/b", videoId: "b" });
    await new Promise((resolve) => setImmediate(resolve));
    failDownloadRecords(path); // SQLite undoes the whole turn, intents included
    const intent = store.markSubmitting(a.id);
    await expect(store.markDownloaded(await store.getJob(b.id), "m/b.mp4", "/out")).rejects.toThrow(
      /disk is full/,
    );
    // The request guarded by this intent must never leave.
    await expect(intent).rejects.toThrow(StateFileError);
    await expect(store.markSubmitted(a.id, "1")).rejects.toThrow(/could not write the state file/);
    await expect(store.close()).rejects.toThrow(StateFileError);
    const again = StateStore.open(path, { baseUrl: "x" });
    expect((await again.getJob(a.id)).state).toBe("pending");
    await again.close();
  });

  it("keeps the other writes of a turn, and the events of each, when one write fails on its own", async () => {
    const path = join(await tempDir(), "state.db");
    const store = StateStore.open(path, { baseUrl: "x" });
    const a = await seedJob(store, JOB);
    const b = await seedJob(store, { ...JOB, key: "m/b", videoId: "b" });
    await new Promise((resolve) => setImmediate(resolve));
    // A statement that fails without undoing the transaction (a constraint, not a full disk).
    const other = new Database(path);
    other.exec(
      `CREATE TRIGGER refuse BEFORE UPDATE OF error ON jobs WHEN NEW.error = 'refused' BEGIN SELECT RAISE(ABORT, 'refused'); END`,
    );
    other.close();
    await store.markSubmitted(a.id, "1");
    await expect(store.markUncertain(b.id, "refused")).rejects.toThrow(/refused/);
    await store.markFailed(b.id, "local", "no such file");
    await store.close();
    const db = new Database(path, { readonly: true });
    const events = db.prepare("SELECT job_id, kind, detail FROM events ORDER BY id").all();
    const states = db.prepare("SELECT id, state FROM jobs ORDER BY id").all();
    db.close();
    expect(states).toEqual([
      { id: a.id, state: "submitted" },
      { id: b.id, state: "Fail" },
    ]);
    expect(events).toEqual([
      { job_id: a.id, kind: "submitted", detail: "1" },
      { job_id: b.id, kind: "fail", detail: "local: no such file" },
    ]);
  });

  it("undoes a failed write of several statements whole, its events included", async () => {
    const path = join(await tempDir(), "state.db");
    const store = StateStore.open(path, { baseUrl: "x" });
    const a = await seedJob(store, JOB);
    const b = await seedJob(store, { ...JOB, key: "m/b", videoId: "b" });
    store.markSubmitting(a.id).catch(() => {});
    await store.markSubmitting(b.id);
    const other = new Database(path);
    other.exec(
      `CREATE TRIGGER refuse BEFORE UPDATE OF state ON jobs WHEN NEW.id = ${b.id} AND NEW.state = 'uncertain' BEGIN SELECT RAISE(ABORT, 'refused'); END`,
    );
    other.close();
    // a is marked first, then b's update fails: a's change and its event go too.
    await expect(store.markInterruptedSubmissionsUncertain()).rejects.toThrow(/refused/);
    await store.close();
    const db = new Database(path, { readonly: true });
    const kinds = db.prepare("SELECT kind FROM events ORDER BY id").pluck().all();
    const states = db.prepare("SELECT state FROM jobs ORDER BY id").pluck().all();
    db.close();
    expect(states).toEqual(["submitting", "submitting"]);
    expect(kinds).toEqual(["submitting", "submitting"]);
  });

  it("looks up a rerun's 20,000 jobs by the index, each once: in well under a second, not minutes", async () => {
    const store = StateStore.open(join(await tempDir(), "state.db"), { baseUrl: "x" });
    try {
      const jobs = Array.from({ length: 20_000 }, (_, i) => ({ ...JOB, key: `m/v${i}`, specHash: `h${i}` }));
      const first = await store.upsertJobs(jobs);
      const started = Date.now();
      expect(await store.upsertJobs(jobs)).toEqual(first);
      expect(await store.notRecorded(jobs)).toEqual([]);
      expect((await store.notSentAnywhere(jobs)).length).toBe(20_000);
      // Each list scanned once per row of the table, they took minutes.
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await store.close();
    }
  });

  it("reads every column of a job row, with its value", async () => {
    const path = join(await tempDir(), "state.db");
    const store = StateStore.open(path, { baseUrl: "x" });
    const row = await seedJob(store, JOB);
    await store.markSubmitting(row.id);
    await store.markSubmitted(row.id, "77");
    await store.recordTaskStatus(row.id, "Success", "http://x/v.mp4", undefined);
    await store.markDownloaded(await store.getJob(row.id), "m/a.mp4", "/out");
    const read = await store.getJob(row.id);
    await store.close();
    // A column added by a migration but not read by the store would be missing here.
    const db = new Database(path, { readonly: true });
    const columns = (db.pragma("table_info(jobs)") as { name: string }[]).map((c) => c.name);
    const { service_id: _scope, ...direct } = db.prepare("SELECT * FROM jobs WHERE id = ?").get(row.id) as {
      service_id: number;
    };
    db.close();
    // service_id is the store's own scoping, not part of a row.
    expect(Object.keys(read).sort()).toEqual(columns.filter((c) => c !== "service_id").sort());
    expect(read).toEqual(direct);
  });

  it("refuses a file that is not a SQLite database, and leaves it untouched", async () => {
    const path = join(await tempDir(), "state.db");
    writeFileSync(path, "hello, I am a text file\n");
    expect(() => StateStore.open(path, { baseUrl: "x" })).toThrow(StateFileError);
    expect(() => StateStore.open(path, { baseUrl: "x" })).toThrow(/not a reel state file/);
  });

  it("refuses another program's SQLite database", async () => {
    const path = join(await tempDir(), "other.db");
    const db = new Database(path);
    db.exec("CREATE TABLE customers (id INTEGER PRIMARY KEY)");
    db.close();
    expect(() => StateStore.open(path, { baseUrl: "x" })).toThrow(/another program/);
  });

  it("refuses a damaged state file instead of recreating it", async () => {
    const path = join(await tempDir(), "state.db");
    const store = StateStore.open(path, { baseUrl: "x" });
    for (let i = 0; i < 200; i++)
      await store.recordFileHash(
        `/f/${i}`,
        { size: i, mtimeNs: String(i), ctimeNs: "0", ino: "0" },
        "ab".repeat(32),
      );
    await store.close();
    // Overwrite the b-tree header of every page but the first with garbage (the file header stays valid).
    const db = readFileSync(path);
    for (let page = 4096; page < db.length; page += 4096) db.fill(0x5a, page, page + 16);
    writeFileSync(path, db);
    expect(() => StateStore.open(path, { baseUrl: "x" })).toThrow(/damaged/);
  });

  it.runIf(existsSync("/proc/self/stat"))(
    "takes over a lock whose pid now belongs to another program (after a reboot, or reused)",
    async () => {
      const path = join(await tempDir(), "state.db");
      const other = spawn("sleep", ["30"], { stdio: "ignore" }); // alive, and not a reel
      try {
        const stat = readFileSync(`/proc/${other.pid}/stat`, "utf8");
        const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!;
        const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
        const takesOver = (owner: string): boolean => {
          writeFileSync(`${path}.lock`, `${owner}\n`);
          try {
            StateStore.open(path, { baseUrl: "x" }).closeSync();
            return true;
          } catch (error) {
            if (error instanceof StateLockedError) return false;
            throw error;
          }
        };
        expect(takesOver(`${other.pid} 00000000-0000-0000-0000-000000000000 ${start}`)).toBe(true); // a boot ago
        expect(takesOver(`${other.pid} ${boot} 1`)).toBe(true); // the pid was reused since
        expect(takesOver(`${other.pid} ${boot} ${start}`)).toBe(false); // its owner still runs
        expect(takesOver(`${other.pid}`)).toBe(false); // an older reel's lock: the pid alone decides
      } finally {
        other.kill();
      }
    },
  );

  it("lets one process at a time use a state file, by any path to it, and takes over the lock of a killed one", async () => {
    const path = join(await tempDir(), "state.db");
    // A child process holds the state open, as a running `reel run` would (dist/ is built by npm test).
    const storeModule = new URL("../../dist/state/sqlite/store.js", import.meta.url).href;
    const script = `const { StateStore } = await import(${JSON.stringify(storeModule)});
      StateStore.open(${JSON.stringify(path)}, { baseUrl: "x" }); console.log("ready"); setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (d: Buffer) => d.toString().includes("ready") && resolve());
      child.on("exit", (code) => reject(new Error(`child exited ${code}`)));
    });
    expect(() => StateStore.open(path, { baseUrl: "x" })).toThrow(StateLockedError);
    expect(() => StateStore.open(path, { baseUrl: "x" })).toThrow(/another reel process/);
    // The same file through a link is the same file: locked too.
    symlinkSync(path, join(dirname(path), "link.db"));
    expect(() => StateStore.open(join(dirname(path), "link.db"), { baseUrl: "x" })).toThrow(StateLockedError);
    child.kill("SIGKILL");
    await new Promise((resolve) => child.on("exit", resolve));
    const store = StateStore.open(path, { baseUrl: "x" });
    await store.close();
  });
});
