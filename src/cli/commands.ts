import type { Command } from "./command.js";
import { makeCompletionCommand } from "./completion-command.js";
import { budgetCommand } from "./budget-command.js";
import { cleanCommand } from "./clean-command.js";
import { eventsCommand } from "./events-command.js";
import { exportCommand } from "./export-command.js";
import { approveCommand, rejectCommand, undecideCommand } from "./decide-command.js";
import { forgetCommand } from "./forget-command.js";
import { initCommand } from "./init-command.js";
import { planCommand } from "./plan-command.js";
import { retakeCommand } from "./retake-command.js";
import { reviewCommand } from "./review-command.js";
import { runCommand } from "./run-command.js";
import { sandboxCommand } from "./sandbox-command.js";
import { statusCommand } from "./status-command.js";
import { watchCommand } from "./watch-command.js";
import { validateCommand } from "./validate-command.js";

/** Every command of the CLI, in the order `reel --help` lists them. */
export const COMMANDS: readonly Command[] = [
  initCommand,
  validateCommand,
  planCommand,
  runCommand,
  watchCommand,
  budgetCommand,
  statusCommand,
  eventsCommand,
  approveCommand,
  rejectCommand,
  undecideCommand,
  retakeCommand,
  forgetCommand,
  cleanCommand,
  exportCommand,
  reviewCommand,
  sandboxCommand,
  makeCompletionCommand(() => COMMANDS),
];
