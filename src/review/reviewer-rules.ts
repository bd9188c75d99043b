// What a reviewer's name and note may be, wherever they come from (a flag, the environment, a
// terminal's answer, the review page): one rule for the commands and the page.
import { UsageError } from "../errors/usage.js";

const REVIEWER_MAX = 80;
const NOTE_MAX = 2000;

// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const CONTROL = /[\x00-\x1f\x7f]/;
// eslint-disable-next-line no-control-regex -- in a note, line breaks and tabs are text
const NOTE_CONTROL = /[\x00-\x08\x0b-\x1f\x7f]/;

/** `name` trimmed, or refused (UsageError) when empty, too long or not one line; `from` names it. */
export function checkReviewer(name: string, from: string): string {
  const trimmed = name.trim();
  if (trimmed === "") throw new UsageError(`${from} is empty: give the reviewer's name`);
  if (trimmed.length > REVIEWER_MAX || CONTROL.test(trimmed)) {
    throw new UsageError(
      `${from} should be a name of at most ${REVIEWER_MAX} characters, on one line (got ${JSON.stringify(trimmed.slice(0, 40))}${trimmed.length > 40 ? "..." : ""})`,
    );
  }
  return trimmed;
}

/** A note trimmed (undefined when empty), or refused (UsageError); `from` names where it came from. */
export function checkNote(note: string, from: string): string | undefined {
  const trimmed = note.trim();
  if (trimmed === "") return undefined;
  if (trimmed.length > NOTE_MAX) {
    throw new UsageError(`${from} is ${trimmed.length} characters long; keep it to ${NOTE_MAX}`);
  }
  if (NOTE_CONTROL.test(trimmed)) throw new UsageError(`${from} holds a control character; write it as text`);
  return trimmed;
}
