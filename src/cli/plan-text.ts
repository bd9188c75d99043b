// What `reel plan` prints as text: the plan (jobs by state, uploads, speech, seconds of video per
// model, the jobs listed), the spend per manifest, the reasons --explain gives, a named budget's line,
// and what the plan was compared with.
import type { Explained, Plan } from "../manifest/index.js";
import type { PlanSpend } from "../prices/index.js";
import type { SharedBudget } from "../budget/named.js";
import { sharedCapText, sharedSpentText } from "../budget/messages.js";
import { isSandboxAddress } from "../state/service-address.js";
import type { JobStore } from "../state/job-store.js";
import { plural } from "../plural.js";

const LIST_LIMIT = 20;

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function keyList(label: string, keys: readonly string[]): string[] {
  if (keys.length === 0) return [];
  const shown = keys.slice(0, LIST_LIMIT).map((k) => `  ${k}`);
  if (keys.length > LIST_LIMIT) shown.push(`  ... and ${keys.length - LIST_LIMIT} more (--json lists all)`);
  return [`${label}:`, ...shown];
}

export function formatPlan(
  plan: Plan,
  summaryLine: string,
  comparedWith: string,
  spend: readonly string[] = [],
): string {
  const j = plan.jobs;
  const uploadBytes = plan.uploads.new.reduce((sum, u) => sum + u.size, 0);
  const replaced = new Map(plan.replaces.map((r) => [r.key, r.keptAs]));
  const lines = [
    summaryLine,
    comparedWith,
    "",
    `jobs       ${j.new.length} new, ${j.done.length} done, ${j.inFlight.length} in flight, ${j.failed.length} failed, ${j.uncertain.length} uncertain`,
    ...(plan.repeats.length > 0
      ? [
          `           ${plan.repeats.length} of the new jobs repeat a video already made under another name (see below)`,
        ]
      : []),
    ...(plan.sentElsewhere.length > 0
      ? [
          `           ${plan.sentElsewhere.length} of the new jobs were already sent to another service address: run refuses them without --new-service (see below)`,
        ]
      : []),
    `uploads    ${plan.uploads.new.length} to upload (${formatBytes(uploadBytes)}), ${plan.uploads.cached.length} already uploaded`,
    ...(plan.downloads.length > 0
      ? [`downloads  ${plural(plan.downloads.length, "https file")} to fetch, then upload`]
      : []),
    `speech     ${plan.speech.new.length} to generate, ${plan.speech.cached.length} already made`,
    "",
    "seconds of video per model",
    `  ${"model".padEnd(15)}${"videos".padStart(8)}${"seconds".padStart(10)}${"new".padStart(8)}`,
  ];
  for (const m of plan.models) {
    lines.push(
      `  ${m.model.padEnd(15)}${String(m.videos).padStart(8)}${String(m.seconds).padStart(10)}${String(m.newSeconds).padStart(8)}`,
    );
  }
  const newSeconds = plan.models.reduce((sum, m) => sum + m.newSeconds, 0);
  lines.push(
    `  ${"total".padEnd(15)}${String(plan.videos).padStart(8)}${String(plan.seconds).padStart(10)}${String(newSeconds).padStart(8)}`,
  );
  lines.push(...spend);
  const lists = [
    ...keyList(
      "to submit",
      j.new.map((key) => {
        const kept = replaced.get(key);
        return kept === undefined
          ? key
          : `${key} (replaces an earlier version: its video is kept as ${kept})`;
      }),
    ),
    ...keyList("in flight", j.inFlight),
    ...keyList(
      "failed (run --retry-failed to resubmit, up to --max-attempts attempts a job, 3 by default)",
      j.failed,
    ),
    ...keyList("uncertain (run --resubmit-uncertain to resubmit)", j.uncertain),
    ...keyList(
      "new, yet the same request as a video already made (a renamed manifest or id?): a run pays for these again; to keep the old ones, give the manifest its old name (name: ...) or the video its old id",
      plan.repeats.map((r) => `${r.key} (made as ${r.sameAs})`),
    ),
    ...keyList(
      "new here, yet already sent to another address (the same service under another name? use that address; another service? run --new-service pays for them again)",
      plan.sentElsewhere.map((r) => `${r.key} (sent to ${r.baseUrl})`),
    ),
  ];
  if (lists.length > 0) lines.push("", ...lists);
  return `${lines.join("\n")}\n`;
}

/** The spend table fits this many columns (an 80-column terminal, one spare). */
const TABLE_COLUMNS = 79;

/**
 * Seconds (and credits, with prices) per manifest and in total: new, paid again on request, paid.
 * Its columns as wide as their figures; a manifest name too long for the table has a line of its own,
 * its figures on the next.
 */
export function formatSpend(spend: PlanSpend): string[] {
  const n = (value: number): string => String(Math.round(value * 100) / 100);
  const credits = spend.credits;
  const figures = (jobs: number, s: PlanSpend["seconds"], c: PlanSpend["seconds"] | undefined): string[] => [
    String(jobs),
    n(s.new),
    n(s.retry),
    n(s.paid),
    ...(c ? [n(c.new), n(c.retry), n(c.paid)] : []),
  ];
  const rows: { name: string; figures: string[] }[] = [
    ...spend.manifests.map((m) => ({ name: m.name, figures: figures(m.jobs, m.seconds, m.credits) })),
    {
      name: "total",
      figures: figures(
        spend.manifests.reduce((sum, m) => sum + m.jobs, 0),
        spend.seconds,
        credits,
      ),
    },
  ];
  const headers = ["jobs", "new", "retry", "paid", ...(credits ? ["new", "retry", "paid"] : [])];
  // Each figure's column: its widest entry (at least 5), two spaces before it.
  const widths = headers.map((h, i) => 2 + Math.max(5, h.length, ...rows.map((r) => r.figures[i]!.length)));
  const figuresWidth = widths.reduce((sum, w) => sum + w, 0);
  const longest = Math.max("manifest".length, ...rows.map((r) => r.name.length));
  const nameWidth = Math.max("manifest".length, Math.min(longest, TABLE_COLUMNS - 2 - figuresWidth));
  const line = (name: string, cells: readonly string[]): string =>
    `  ${name.padEnd(nameWidth)}${cells.map((cell, i) => cell.padStart(widths[i]!)).join("")}`;
  // The groups' names over their three columns.
  const group = (title: string, from: number): string =>
    title.padStart(widths.slice(from, from + 3).reduce((sum, w) => sum + w, 0));
  const lines = [
    "",
    credits
      ? `spend per manifest (seconds of video; credits by ${credits.prices})`
      : "spend per manifest (seconds of video; no price list: see --prices)",
    `  ${" ".repeat(nameWidth + widths[0]!)}${group("seconds of video", 1)}${credits ? group("credits", 4) : ""}`,
    line("manifest", headers),
  ];
  for (const row of rows) {
    if (row.name.length > nameWidth) lines.push(`  ${row.name}`, line("", row.figures));
    else lines.push(line(row.name, row.figures));
  }
  if (credits && credits.speech > 0) lines.push(`  (new credits include ${n(credits.speech)} for speech)`);
  if (spend.unpriced.length > 0)
    lines.push(
      `  not priced, so not counted: ${spend.unpriced.join(", ")} (add them to ${credits?.prices ?? "the price list"})`,
    );
  return lines;
}

/** --explain, as text: each job to submit and why, its changes one per line. */
export function formatExplained(explained: readonly Explained[]): string {
  const lines = ["", `why (${explained.length} to submit):`];
  if (explained.length === 0) lines.push("  nothing to submit");
  for (const { key, reasons } of explained) {
    for (const reason of reasons) {
      if (reason.changes && reason.changes.length > 0) {
        lines.push(`  ${key}: changed since its last version:`);
        for (const change of reason.changes) lines.push(`      ${change}`);
      } else lines.push(`  ${key}: ${reason.text}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

export function sharedPlanLine(shared: SharedBudget, json: Record<string, unknown>): string {
  const { wouldSpend, fits } = json as { wouldSpend: { seconds: number; credits: number }; fits: boolean };
  const row = shared.row;
  const would = [
    row.maxSeconds !== null ? `${wouldSpend.seconds} s of video` : undefined,
    row.maxCredits !== null ? `${Math.round(wouldSpend.credits * 100) / 100} credits` : undefined,
  ]
    .filter((x) => x !== undefined)
    .join(", ");
  return `budget '${row.name}' (${sharedCapText(row)}): ${sharedSpentText(row)}; this run would spend ${would} from it${fits ? "" : ", more than is left: it would stop at the budget"}`;
}

/** What the plan was compared with: a mistyped --state or another service explains "all new". */
export function comparedWith(store: JobStore | undefined, service: string | undefined): string {
  // The state file itself is named on the plan's first line.
  if (!store) return "compared with: nothing (no state file yet): every job is new";
  const name =
    service !== undefined && isSandboxAddress(service)
      ? "the sandbox (--sandbox)"
      : (service ?? "no service yet");
  return `compared with: what the state file records of ${name}`;
}
