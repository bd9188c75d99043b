import type { CommandEntry } from "./command.js";

export type { CommandEntry };

/** Every command of the CLI, in the order `reel --help` lists them. */
export const COMMANDS: readonly CommandEntry[] = [
  {
    name: "init",
    summary: "make a folder a reel project: reel.yaml, an example manifest, a media folder",
    load: async () => (await import("./init-command.js")).initCommand,
  },
  {
    name: "validate",
    summary: "check manifests; print every problem as file:line:col: message",
    load: async () => (await import("./validate-command.js")).validateCommand,
  },
  {
    name: "plan",
    summary: "show what a run would do, without calling the service",
    load: async () => (await import("./plan-command.js")).planCommand,
  },
  {
    name: "run",
    summary: "process every job to a final state, resuming from the state file",
    load: async () => (await import("./run-command.js")).runCommand,
  },
  {
    name: "watch",
    summary: "run the manifests of a folder as they land or change, until stopped",
    load: async () => (await import("./watch-command.js")).watchCommand,
  },
  {
    name: "budget",
    summary: "set or show a named budget: one cap shared by every runner that names it",
    load: async () => (await import("./budget-command.js")).budgetCommand,
  },
  {
    name: "status",
    summary: "jobs per manifest and state, from the state file",
    load: async () => (await import("./status-command.js")).statusCommand,
  },
  {
    name: "events",
    summary: "the event stream (JSON lines) read back from the state: every runner's",
    load: async () => (await import("./events-command.js")).eventsCommand,
  },
  {
    name: "approve",
    summary: "approve takes: the chosen videos",
    load: async () => (await import("./decide-command.js")).approveCommand,
  },
  {
    name: "reject",
    summary: "reject takes, with a note of why",
    load: async () => (await import("./decide-command.js")).rejectCommand,
  },
  {
    name: "undecide",
    summary: "clear the decision on takes: undecided again",
    load: async () => (await import("./decide-command.js")).undecideCommand,
  },
  {
    name: "retake",
    summary: "queue one more take of a video (paid), marking the take retaken rejected",
    load: async () => (await import("./retake-command.js")).retakeCommand,
  },
  {
    name: "forget",
    summary: "drop manifests deleted from the project from OUT's reports (deletes no file)",
    load: async () => (await import("./forget-command.js")).forgetCommand,
  },
  {
    name: "clean",
    summary: "remove the videos of rejected takes and old versions",
    load: async () => (await import("./clean-command.js")).cleanCommand,
  },
  {
    name: "export",
    summary: "copy the chosen videos into a folder, with a delivery sheet",
    load: async () => (await import("./export-command.js")).exportCommand,
  },
  {
    name: "review",
    summary: "the review page: approve, reject and retake takes in the browser",
    load: async () => (await import("./review-command.js")).reviewCommand,
  },
  {
    name: "sandbox",
    summary: "serve the built-in emulator of the service on 127.0.0.1 until stopped",
    load: async () => (await import("./sandbox-command.js")).sandboxCommand,
  },
  {
    name: "completion",
    summary: "print a shell completion script (bash, zsh or fish)",
    load: async () => (await import("./completion-command.js")).makeCompletionCommand(() => COMMANDS),
  },
];
