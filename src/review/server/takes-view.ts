// What the page shows of each take: read from the store in three queries (the current version of
// every job of the service, their latest decisions, the retakes), nothing from the service.
import { takeOf } from "../../manifest/expand/takes.js";
import { realPathOf } from "../../real-path.js";
import { readStoredSpec } from "../../stored-spec.js";
import {
  type JobRow,
  type RetakeRow,
  type ReviewStore,
  versionKey,
  decisionsByVersion,
} from "../../state/job-store.js";
import { resultOf } from "../../output/job-record.js";
import type { DecisionFields } from "../../output/decision-fields.js";
import { decisionFieldsOf } from "../../output/decision-fields.js";
import type { ManifestVars, Vars } from "./manifest-vars.js";

export interface TakeView extends DecisionFields {
  /** The job key: `manifest/id~n`. */
  readonly job: string;
  readonly manifest: string;
  readonly id: string;
  /** The video it is a take of, and which take. */
  readonly video: string;
  readonly take: number;
  readonly seed: number | null;
  /** A matrix video's variables (`{ lang: "de" }`), when its manifest is read. */
  readonly vars: Vars | null;
  readonly status: string;
  readonly error: string | null;
  readonly model: string;
  readonly seconds: number;
  /** Where the page loads its video from (under /out/), when it has one in this OUT. */
  readonly src: string | null;
  /** A retake: its state, and the take it retakes. */
  readonly retake: { readonly state: string; readonly from: string } | null;
}

/** `/out/<file>`, each part percent-encoded, when `row`'s video lies in the output folder served. */
function srcOf(row: JobRow, realOut: string): string | null {
  if (row.state !== "Success" || row.file === null) return null;
  if (row.out_dir !== null && realPathOf(row.out_dir) !== realOut) return null;
  return `/out/${row.file.split("/").map(encodeURIComponent).join("/")}`;
}

/**
 * Every take of service `baseUrl` in `store`, by manifest, video and take number; of the manifests
 * `manifests` shows, with their variables.
 */
export async function readTakes(
  store: ReviewStore,
  baseUrl: string,
  outDir: string,
  manifests?: ManifestVars,
): Promise<TakeView[]> {
  const rows = (await store.listLatestJobs()).filter(
    (row) => row.base_url === baseUrl && (manifests?.shows(row.manifest) ?? true),
  );
  const decisions = decisionsByVersion(await store.latestDecisions());
  const retakes = new Map<string, RetakeRow>(
    (await store.listRetakes()).filter((r) => r.state !== "withdrawn").map((r) => [r.key, r]),
  );
  const realOut = realPathOf(outDir);
  const takes = rows.map((row): TakeView => {
    const { video, n } = takeOf(row.video_id);
    const result = resultOf(row, decisions.get(versionKey(row.job_key, row.spec_hash)));
    const retake = retakes.get(row.job_key);
    return {
      job: row.job_key,
      manifest: row.manifest,
      id: row.video_id,
      video,
      take: n,
      seed: readStoredSpec(row.spec_json).seed ?? null,
      vars: manifests?.of(row.manifest, video) ?? null,
      status: result.status,
      error: result.error,
      model: row.model,
      seconds: row.seconds,
      src: srcOf(row, realOut),
      retake: retake === undefined ? null : { state: retake.state, from: retake.fromKey },
      ...decisionFieldsOf(decisions.get(versionKey(row.job_key, row.spec_hash))),
    };
  });
  return takes.sort(
    (a, b) => a.manifest.localeCompare(b.manifest) || a.video.localeCompare(b.video) || a.take - b.take,
  );
}
