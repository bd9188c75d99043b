// The one place logs are configured. The API key is removed here, at the logger level, twice over:
// by pino's path redaction (headers, options objects) and by scrubbing the serialized line, so a key
// that slips into a message, an error or a URL is still never written.
import { type DestinationStream, type Logger, pino } from "pino";

export type { Logger } from "pino";

export const REDACTED = "[REDACTED]";

const REDACT_PATHS = [
  "apiKey",
  "*.apiKey",
  "authorization",
  "*.authorization",
  "headers.authorization",
  "*.headers.authorization",
  "req.headers.authorization",
];

export interface LoggerOptions {
  /** @defaultValue "info" */
  readonly level?: pino.LevelWithSilent;
  /** Secrets to scrub from every line, whatever path they appear under. */
  readonly secrets?: readonly string[];
  /** Where lines go. @defaultValue stderr */
  readonly destination?: DestinationStream;
}

export function makeLogger(options: LoggerOptions = {}): Logger {
  const secrets = (options.secrets ?? []).filter((s) => s.length > 0);
  return pino(
    {
      level: options.level ?? "info",
      redact: { paths: REDACT_PATHS, censor: REDACTED },
      hooks: { streamWrite: (line) => scrubSecrets(line, secrets) },
    },
    options.destination ?? pino.destination(2),
  );
}

export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length > 0 && out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  return out;
}

/** A logger that writes nothing, for library callers that pass none. */
export const silentLogger: Logger = pino({ level: "silent" });
