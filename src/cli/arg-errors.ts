// Node's parseArgs errors, said in reel's words: its own ("To specify a positional argument starting
// with a '-', place it at the end of the command after '--', as in '-- "--frobnicate"'") send the
// user towards the wrong fix. A mistyped option gets the nearest real one.
import { editDistance } from "../edit-distance.js";
import type { OptionsConfig } from "./command.js";

/** One line for a parseArgs error (ERR_PARSE_ARGS_*), or undefined for a message of another shape. */
export function explainArgError(message: string, options: OptionsConfig): string | undefined {
  const unknown = /^Unknown option '([^']+)'/.exec(message);
  if (unknown) {
    const given = unknown[1]!;
    const near = nearestOption(given, options);
    return `unknown option ${given}${near ? `; did you mean --${near}?` : ""}`;
  }
  const missing = /^Option '(-[^' ]+)(?: <value>)?' argument missing/.exec(message);
  if (missing) return `${missing[1]} needs a value`;
  const ambiguous = /^Option '(-[^' ]+)' argument is ambiguous/.exec(message);
  if (ambiguous) {
    const name = ambiguous[1]!;
    return `${name} needs a value, and what follows it is an option; to give a value starting with '-', write ${name}=VALUE`;
  }
  const noValue = /^Option '(-[^' ]+)' does not take an argument/.exec(message);
  if (noValue) return `${noValue[1]} takes no value`;
  return undefined;
}

/** The known option nearest to `given` (`--concurency`, `--base_url`), if one is near enough. */
function nearestOption(given: string, options: OptionsConfig): string | undefined {
  const typed = given.replace(/^-+/, "").split("=")[0]!.toLowerCase().replaceAll("_", "-");
  let best: { name: string; distance: number } | undefined;
  for (const name of Object.keys(options)) {
    const distance = name.startsWith(typed) && typed.length >= 3 ? 0 : editDistance(typed, name);
    if (!best || distance < best.distance) best = { name, distance };
  }
  // Two edits on a long name, one on a short one: beyond that the "suggestion" is noise.
  return best && best.distance <= (best.name.length > 5 ? 2 : 1) ? best.name : undefined;
}
