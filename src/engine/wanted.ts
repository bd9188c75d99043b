// The jobs the manifests ask for now: per manifest its job keys, per key the version (spec hash)
// wanted. A watch changes them as manifests change; a job no longer wanted is not submitted.
import type { Job } from "../manifest/index.js";
import { type JobRow, type VersionRef, versionKey } from "../state/job-store.js";
import type { WantedJobs } from "./context.js";

export class WantedSet implements WantedJobs {
  private readonly wanted = new Map<string, string>(); // job key -> spec hash of the version wanted
  private readonly keysOf = new Map<string, Set<string>>(); // manifest -> its job keys

  isWanted(job: Job): boolean {
    return this.wanted.get(job.key) === job.specHash;
  }

  isSuperseded(row: JobRow): boolean {
    const current = this.wanted.get(row.job_key);
    return current !== undefined && current !== row.spec_hash;
  }

  /** Makes `jobs` the wanted jobs of `manifest`: its other jobs are wanted no longer. */
  set(manifest: string, jobs: readonly Job[]): void {
    const keys = new Set(jobs.map((job) => job.key));
    for (const key of this.keysOf.get(manifest) ?? []) if (!keys.has(key)) this.wanted.delete(key);
    this.keysOf.set(manifest, keys);
    for (const job of jobs) this.wanted.set(job.key, job.specHash);
  }

  /** The manifest is gone: none of its jobs is wanted. */
  drop(manifest: string): void {
    for (const key of this.keysOf.get(manifest) ?? []) this.wanted.delete(key);
    this.keysOf.delete(manifest);
  }

  /** The row of every wanted job found in `versions` (store.jobsByVersion()), manifest by manifest. */
  rows(versions: Map<string, JobRow>): JobRow[] {
    const rows: JobRow[] = [];
    for (const keys of this.keysOf.values()) {
      for (const key of keys) {
        const row = versions.get(versionKey(key, this.wanted.get(key)!));
        if (row) rows.push(row);
      }
    }
    return rows;
  }

  /** The version of every wanted job, manifest by manifest, in the order rows lists their rows. */
  *versions(): Generator<VersionRef> {
    for (const keys of this.keysOf.values())
      for (const key of keys) yield { key, specHash: this.wanted.get(key)! };
  }
}
