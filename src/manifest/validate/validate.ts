// Step 2 of loading: the parsed value against the published JSON Schema (ajv, all errors at once),
// each error worded by messages.ts.
import type { ValidateFunction } from "ajv/dist/2020.js";
import { describeSchemaError, type SchemaIssue } from "./messages.js";
import { PROBLEM_CODES } from "../problem.js";
import type { ManifestInput } from "./schema.js";
import { validate as generated } from "./validator.generated.js";

// Compiled ahead of time (see validator-source.ts).
const validator = (): ValidateFunction<ManifestInput> => generated as ValidateFunction<ManifestInput>;

export type ValidateResult = { ok: true; manifest: ManifestInput } | { ok: false; issues: SchemaIssue[] };

/** Validates a parsed manifest; on success the value is typed as the schema's "as written" type. */
export function validateManifestValue(value: unknown): ValidateResult {
  const validate = validator();
  if (validate(value)) return { ok: true, manifest: value };

  const issues: SchemaIssue[] = [];
  const seen = new Set<string>();
  for (const error of validate.errors ?? []) {
    const issue = describeSchemaError(error, value);
    if (!issue) continue;
    const key = `${issue.path.join("/")}|${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  // A value that is wrong in itself ("480p" is no resolution) makes any model rule about it noise.
  const wrongValues = new Set(
    issues.filter((i) => i.code !== PROBLEM_CODES.modelRule).map((i) => `${i.path.join("/")}|${i.target}`),
  );
  // "missing text" next to "unknown field txt; did you mean text?" says the same thing twice.
  const typos = new Set(
    issues
      .filter((i) => i.code === PROBLEM_CODES.unknownField && i.field !== undefined)
      .map((i) => `${i.path.slice(0, -1).join("/")}|${i.field}`),
  );
  return {
    ok: false,
    issues: issues.filter(
      (i) =>
        !(i.code === PROBLEM_CODES.modelRule && wrongValues.has(`${i.path.join("/")}|${i.target}`)) &&
        !(i.code === PROBLEM_CODES.missingField && typos.has(`${i.path.join("/")}|${i.field}`)),
    ),
  };
}
