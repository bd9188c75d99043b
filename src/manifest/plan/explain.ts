// `reel plan --explain`: for every job a run would submit, why: a new id; a new version of
// a job (the fields that differ from its last version, e.g. `chunks[0].text "Hi" -> "Hello"`,
// `resolution 720p -> 1080p`, `source: faces/anna.png content changed`); a failure or an unknown
// outcome sent again on request (--retry-failed, --resubmit-uncertain); a failure before anything
// was sent; and a request already made under another name. Pure: what the state knows comes through
// the view.
import { isAbsolute, relative } from "node:path";
import { plural } from "../../plural.js";
import type { ExplainView, Plan } from "./plan.js";
import { type CellSource, changedColumns, columnsSaid, type OldValue } from "./row-cells.js";
import type { AssetRef, Job, NormalizedManifest, SpeechRef } from "../types.js";
import { isRecord } from "../../values.js";

export type ReasonCode =
  | "NEW_ID"
  | "CHANGED"
  | "NOT_SENT_YET"
  | "FAILED_BEFORE_SENT"
  | "RETRY_FAILED"
  | "RESUBMIT_UNCERTAIN"
  | "SAME_AS"
  | "RETAKE";

export interface Reason {
  readonly code: ReasonCode;
  /** One line, for people. */
  readonly text: string;
  /** CHANGED: each field that differs, as `path old -> new`. */
  readonly changes?: readonly string[];
  /** CHANGED: the path of each field that differs (`chunks[0].text`), in the order of `changes`. */
  readonly fields?: readonly string[];
  /** CHANGED, a job of `rows:`: the CSV cells the changes came from (each also said in its change). */
  readonly cells?: readonly CellSource[];
}

export interface Explained {
  readonly key: string;
  readonly reasons: readonly Reason[];
}

export interface ExplainOptions {
  readonly retryFailed: boolean;
  readonly resubmitUncertain: boolean;
  /** Files are named relative to this folder (the one reel was started in). */
  readonly cwd: string;
}

/** Why each job `plan` counts as to be submitted would be, in manifest order. */
export function explainPlan(
  manifests: readonly NormalizedManifest[],
  plan: Plan,
  view: Partial<ExplainView> | undefined,
  options: ExplainOptions,
): Explained[] {
  const fresh = new Set(plan.jobs.new);
  const failed = new Set(options.retryFailed ? plan.jobs.failed : []);
  const uncertain = new Set(options.resubmitUncertain ? plan.jobs.uncertain : []);
  const repeats = new Map(plan.repeats.map((r) => [r.key, r.sameAs]));
  const out: Explained[] = [];
  for (const job of manifests.flatMap((m) => m.jobs)) {
    const reasons: Reason[] = [];
    if (failed.has(job.key)) {
      const error = view?.errorOf?.(job.key, job.specHash);
      reasons.push({
        code: "RETRY_FAILED",
        text: `failed earlier${error ? ` (${error})` : ""}, and --retry-failed`,
      });
    } else if (uncertain.has(job.key)) {
      reasons.push({
        code: "RESUBMIT_UNCERTAIN",
        text: "its submission's outcome is unknown (it may have been made), and --resubmit-uncertain",
      });
    } else if (fresh.has(job.key)) {
      reasons.push(explainNew(job, view, options.cwd));
    } else continue;
    const sameAs = repeats.get(job.key);
    if (sameAs !== undefined)
      reasons.push({
        code: "SAME_AS",
        text: `the same request was made before as ${sameAs}: it is paid for again`,
      });
    out.push({ key: job.key, reasons });
  }
  return out;
}

/**
 * Why a job whose version was never sent would be: new, changed since its last version (which
 * fields), or failed before anything was sent. `watch` says it of each manifest it reads.
 */
export function explainNew(job: Job, view: Partial<ExplainView> | undefined, cwd: string): Reason {
  const retake = view?.retakeOf?.(job.key, job.specHash);
  if (retake !== undefined) return { code: "RETAKE", text: retake };
  const error = view?.errorOf?.(job.key, job.specHash);
  if (error !== undefined)
    return { code: "FAILED_BEFORE_SENT", text: `failed before anything was sent (${error}): tried again` };
  const earlier = view?.earlierVersion?.(job.key, job.specHash);
  if (!earlier) {
    return view
      ? { code: "NEW_ID", text: "new: no version of this job was run before" }
      : { code: "NEW_ID", text: "new: no state to compare with" };
  }
  let before: unknown;
  try {
    before = JSON.parse(earlier.specJson);
  } catch {
    before = undefined;
  }
  const diff = diffFields(before, JSON.parse(JSON.stringify(job.spec)) as unknown, cwd);
  const cells: CellSource[] = [];
  const changes = diff.map((d) => {
    const columns = job.row && changedColumns(job.row, job.variables, d.field, d.old);
    if (!job.row || !columns) return d.text;
    const cell = { field: d.field, file: fileShown(job.row.file, cwd), line: job.row.line, columns };
    cells.push(cell);
    return `${d.text} (${cell.file}:${cell.line}, ${columnsSaid(columns)})`;
  });
  return {
    code: "CHANGED",
    text: `changed since its last version${earlier.sent ? "" : " (which was never sent)"}: ${changes.length > 0 ? changes.join("; ") : "its request differs"}`,
    changes,
    fields: diff.map((d) => d.field),
    ...(cells.length > 0 ? { cells } : {}),
  };
}

/** Fields named in a summary at most; the others are counted. */
const SUMMARY_FIELDS = 4;

/**
 * Many jobs' reasons in a few words, as `watch` says what a manifest it read will have generated:
 * `7 changed: chunks[0].text; 2 new`. The words of --explain: `new`, `changed: <fields>`.
 */
export function summarizeReasons(reasons: readonly Reason[]): string {
  const parts: string[] = [];
  const count = (code: ReasonCode): number => reasons.filter((r) => r.code === code).length;
  const changed = reasons.filter((r) => r.code === "CHANGED");
  if (changed.length > 0) {
    const fields = [...new Set(changed.flatMap((r) => r.fields ?? []))];
    const named = fields.slice(0, SUMMARY_FIELDS).join(", ");
    const more = fields.length > SUMMARY_FIELDS ? ` and ${fields.length - SUMMARY_FIELDS} more fields` : "";
    parts.push(`${changed.length} changed${fields.length > 0 ? `: ${named}${more}` : ""}`);
  }
  if (count("NEW_ID") > 0) parts.push(`${count("NEW_ID")} new`);
  if (count("RETAKE") > 0) parts.push(plural(count("RETAKE"), "retake"));
  const failed = count("FAILED_BEFORE_SENT");
  if (failed > 0) parts.push(`${failed} failed before anything was sent: tried again`);
  return parts.join("; ");
}

type Ref = AssetRef | SpeechRef;

const isRef = (value: unknown): value is Ref => isRecord(value) && typeof value.kind === "string";

/** A value as a person reads it in a change: texts quoted (and cut), absent as "(none)". */
function shown(value: unknown): string {
  if (value === undefined || value === null) return "(none)";
  if (typeof value === "string")
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  return String(value as number | boolean);
}

function refShown(ref: Ref, cwd: string): string {
  switch (ref.kind) {
    case "file":
      return fileShown(ref.path, cwd);
    case "url":
      return ref.url;
    case "asset":
      return `{asset: ${ref.id}}`;
    case "speech":
      return `speech (voice ${ref.voiceId}, ${shown(ref.text)})`;
  }
}

/** A file as the user names it: from the folder reel was started in, or whole when outside it. */
function fileShown(path: string, cwd: string): string {
  const shown = relative(cwd, path);
  return shown.startsWith("..") || isAbsolute(shown) ? path : shown;
}

/** Each field of two requests (JobSpec as JSON) that differs, as `path old -> new`. */
export function diffSpecs(before: unknown, after: unknown, cwd: string): string[] {
  return diffFields(before, after, cwd).map((change) => change.text);
}

/** A field that differs: its path (`chunks[0].text`), and the change as `path old -> new`. */
interface FieldChange {
  readonly field: string;
  readonly text: string;
  /** Its old value as a cell of a row could have made it; none when no cell could have changed it. */
  readonly old?: OldValue;
}

/** A value as a template makes it: a text, a number; a file by its path, an asset by its id. */
function oldValueOf(value: unknown): OldValue | undefined {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean")
    return { text: String(value) };
  if (!isRef(value)) return undefined;
  switch (value.kind) {
    case "file":
      return { text: value.path, isPath: true };
    case "url":
      return { text: value.url };
    case "asset":
      return { text: String(value.id) };
    case "speech":
      return undefined;
  }
}

function diffFields(before: unknown, after: unknown, cwd: string): FieldChange[] {
  const changes: FieldChange[] = [];
  diffValue(before, after, "", changes, cwd);
  return changes;
}

function diffValue(before: unknown, after: unknown, path: string, changes: FieldChange[], cwd: string): void {
  if (isRef(before) && isRef(after)) {
    diffRef(before, after, path, changes, cwd);
    return;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    if (before.length !== after.length)
      changes.push({ field: path, text: `${path}: ${before.length} -> ${after.length} items` });
    for (let i = 0; i < Math.min(before.length, after.length); i++)
      diffValue(before[i], after[i], `${path}[${i}]`, changes, cwd);
    return;
  }
  if (isRecord(before) && isRecord(after) && !isRef(before) && !isRef(after)) {
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
      if (key === "stamp") continue; // when the file was judged: not part of the request
      diffValue(before[key], after[key], path === "" ? key : `${path}.${key}`, changes, cwd);
    }
    return;
  }
  if (isRef(before) || isRef(after)) {
    const side = (value: unknown): string => (isRef(value) ? refShown(value, cwd) : shown(value));
    changes.push({ field: path, text: `${path} ${side(before)} -> ${side(after)}`, ...old(before) });
    return;
  }
  if (JSON.stringify(before) === JSON.stringify(after)) return;
  // Texts quoted; a model, a resolution, a seed as they are written.
  const show = (value: unknown): string =>
    typeof value === "string" && !/(^|\.)text$/.test(path) ? value : shown(value);
  changes.push({ field: path, text: `${path} ${show(before)} -> ${show(after)}`, ...old(before) });
}

const old = (value: unknown): { old?: OldValue } => {
  const found = oldValueOf(value);
  return found === undefined ? {} : { old: found };
};

function diffRef(before: Ref, after: Ref, path: string, changes: FieldChange[], cwd: string): void {
  if (before.kind === "file" && after.kind === "file") {
    if (before.sha256 === after.sha256) return; // the same content, whatever its name: the same request
    // The same file with other content: no cell changed.
    if (before.path === after.path)
      changes.push({ field: path, text: `${path}: ${fileShown(after.path, cwd)} content changed` });
    else
      changes.push({
        field: path,
        text: `${path} ${fileShown(before.path, cwd)} -> ${fileShown(after.path, cwd)} (other content)`,
        ...old(before),
      });
    return;
  }
  if (before.kind === "speech" && after.kind === "speech") {
    // Written as `speech:` in the manifest (sent as the chunk's audio).
    const at = path.replace(/\.audio$/, ".speech");
    if (before.voiceId !== after.voiceId)
      changes.push({
        field: `${at}.voice`,
        text: `${at}.voice ${before.voiceId} -> ${after.voiceId}`,
        old: { text: String(before.voiceId) },
      });
    if (before.text !== after.text)
      changes.push({
        field: `${at}.text`,
        text: `${at}.text ${shown(before.text)} -> ${shown(after.text)}`,
        old: { text: before.text },
      });
    return;
  }
  if (JSON.stringify(before) !== JSON.stringify(after))
    changes.push({
      field: path,
      text: `${path} ${refShown(before, cwd)} -> ${refShown(after, cwd)}`,
      ...old(before),
    });
}
