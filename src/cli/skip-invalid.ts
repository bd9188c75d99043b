// `--skip-invalid` of `run` and `plan`: by default one invalid manifest stops everything (nothing is
// sent), which is the safe default; with the flag the valid manifests go on and the invalid ones are
// listed with their problems. Nothing of an invalid manifest is ever sent: the loader yields no
// manifest for a file with a problem.
import type { LoadResult, Problem } from "../manifest/index.js";
import type { OptionsConfig } from "./command.js";
import { EXIT } from "./exit-codes.js";

export const SKIP_INVALID_OPTION: OptionsConfig = { "skip-invalid": { type: "boolean" } };

export const SKIP_INVALID_USAGE = `  --skip-invalid         when some manifests are invalid, go on with the valid ones and list the
                         others with their problems (nothing of them is sent); exit 1 when one
                         was skipped. Without it, one invalid manifest stops everything (exit 2)`;

/** An invalid manifest file (or a path that names none) left out, with its problems. */
export interface SkippedManifest {
  readonly file: string;
  readonly problems: readonly Problem[];
}

/** The files with problems, each with its own, in the order they were found. */
export function skippedManifests(loaded: Pick<LoadResult, "problems">): SkippedManifest[] {
  const byFile = new Map<string, Problem[]>();
  for (const problem of loaded.problems) {
    const list = byFile.get(problem.file) ?? [];
    list.push(problem);
    byFile.set(problem.file, list);
  }
  return [...byFile].map(([file, problems]) => ({ file, problems }));
}

/** Whether to go on despite problems: the flag is given and at least one manifest is valid. */
export function goesOnDespite(loaded: Pick<LoadResult, "problems" | "manifests">, flag: unknown): boolean {
  return loaded.problems.length > 0 && flag === true && loaded.manifests.length > 0;
}

/** "reel run: skipped 2 invalid manifests (nothing of them is sent): a.yaml, b.yaml" */
export function skippedLine(command: "run" | "plan", skipped: readonly SkippedManifest[]): string {
  const n = skipped.length;
  const them = n === 1 ? "it" : "them";
  const note =
    command === "run" ? `nothing of ${them} is sent` : `run --skip-invalid sends nothing of ${them}`;
  return `reel ${command}: skipped ${n} invalid manifest${n === 1 ? "" : "s"} (${note}): ${skipped.map((s) => s.file).join(", ")}`;
}

/** The reminder at the end of a run that skipped manifests, their problems long scrolled away. */
export function skippedReminder(skipped: readonly SkippedManifest[]): string {
  const one = skipped.length === 1;
  return `Skipped as invalid, nothing of ${one ? "it" : "them"} sent: ${skipped.map((s) => s.file).join(", ")}. Fix ${one ? "it" : "them"} (reel validate lists the problems) and run again.`;
}

/** Said when invalid manifests stop a run that has valid ones too. */
export function skipInvalidHint(valid: number): string {
  return `(--skip-invalid would run the ${valid} valid manifest${valid === 1 ? "" : "s"} and list the invalid ones)`;
}

/** Not everything asked for was done: a run that skipped a manifest does not exit 0. */
export function exitCodeWithSkipped(code: number, skipped: readonly SkippedManifest[]): number {
  return code === EXIT.ok && skipped.length > 0 ? EXIT.someJobsFailed : code;
}
