// How both backends (sqlite/sql/, pg/sql/) key and bound what a capped run and a named budget spend:
// one spelling, so a charge written by one is found by the other's reading of the same rule.

/** The budget session ledger's key of one speech (voice ids and texts never contain a newline together). */
export function speechKey(voiceId: string, text: string): string {
  return `${voiceId}\n${text}`;
}

/** A named budget's key of a speech call: its service's, voice and text. */
export function namedSpeechKey(serviceId: number, voiceId: string, text: string): string {
  return `${serviceId}\n${voiceId}\n${text}`;
}

/** Sums of decimal prices (0.1 + 0.2) must not refuse an exact fit. */
export const BUDGET_TOLERANCE = 1e-9;
