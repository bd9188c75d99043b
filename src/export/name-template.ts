// Delivery names (`--name TEMPLATE`, reel.yaml's export.name): placeholders filled from each
// exported video, and every name checked before anything is written (export-rules.ts says which).
import { UsageError } from "../errors/usage.js";
import { NAME_PLACEHOLDER } from "../export-rules.js";
import { takeOf } from "../manifest/expand/takes.js";
import type { ExportItem } from "./choose.js";
import { readStoredSpec } from "../stored-spec.js";

/** A name template and how messages name where it was given. */
export interface NameTemplate {
  readonly text: string;
  /** `--name "{id}.mp4"`, or `reel.yaml:3:9: export.name "{id}.mp4"`. */
  readonly said: string;
  /** What to do about a template refused, when more than editing it where it was given. */
  readonly fix?: string;
}

export function flagTemplate(text: string): NameTemplate {
  return { text, said: `--name ${JSON.stringify(text)}` };
}

/** Each placeholder's text for `item`: the fixed ones, then its variables (a fixed one wins). */
export function placeholderValues(item: ExportItem): Record<string, string> {
  const { row } = item;
  const spec = readStoredSpec(row.spec_json);
  const take = takeOf(row.video_id);
  const finished = row.finished_at ?? row.downloaded_at ?? row.created_at;
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(item.variables)) values[name] = String(value);
  return Object.assign(values, {
    manifest: row.manifest,
    id: row.video_id,
    video: take.video,
    take: String(take.n),
    seed: spec.seed === undefined ? "" : String(spec.seed),
    model: row.model,
    resolution: spec.resolution ?? "",
    aspectRatio: spec.aspectRatio ?? "",
    duration: String(row.seconds),
    // The day the video was made, not today: a second export gives the same names.
    date: new Date(finished).toISOString().slice(0, 10),
  });
}

/** `template` filled from `values`; `{{` and `}}` write a brace. Unknown placeholders: UsageError. */
export function renderName(
  template: NameTemplate,
  values: Readonly<Record<string, string>>,
  id: string,
): string {
  return template.text.replace(NAME_PLACEHOLDER, (whole, name: string | undefined) => {
    if (name === undefined) return whole[0]!;
    const value = values[name];
    if (value === undefined) {
      const known = Object.keys(values).map((n) => `{${n}}`);
      throw new UsageError(
        `${template.said}: ${id} has no {${name}}; the placeholders are ${known.join(" ")}${template.fix ?? ""}`,
      );
    }
    return value;
  });
}
