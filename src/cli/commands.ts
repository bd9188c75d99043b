import type { Command } from "./command.js";
import { completionCommand } from "./completion-command.js";
import { planCommand } from "./plan-command.js";
import { runCommand } from "./run-command.js";
import { sandboxCommand } from "./sandbox-command.js";
import { statusCommand } from "./status-command.js";
import { watchCommand } from "./watch-command.js";
import { validateCommand } from "./validate-command.js";

/** Every command of the CLI, in the order `reel --help` lists them. */
export const COMMANDS: readonly Command[] = [
  validateCommand,
  planCommand,
  runCommand,
  watchCommand,
  statusCommand,
  sandboxCommand,
  completionCommand,
];
