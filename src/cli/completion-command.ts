// `reel completion bash|zsh|fish`: a shell completion script, written from the command table
// (commands.ts) and each command's options and usage text, so that a new command or flag is
// completed the day it is added. What no table says (which values are files or folders) is the small
// map below; a value it does not know gets no suggestion rather than a wrong one.
import { rawStream } from "../display/terminal-stream.js";
import { UsageError } from "../errors/usage.js";
import type { CliIO, Command, ParsedArgs } from "./command.js";
import type { CommandEntry } from "./command.js";
import { EXIT } from "./exit-codes.js";

const SHELLS = ["bash", "zsh", "fish"] as const;
type Shell = (typeof SHELLS)[number];

/** What a value is completed with: files, folders, words, or nothing (a number, a URL...). */
type ValueKind = "file" | "dir" | "none" | readonly string[];

/** Values that are paths or a fixed set of words, by option name (the same in every command). */
const OPTION_VALUES: Readonly<Record<string, ValueKind>> = {
  state: "file",
  out: "dir",
  "allow-read": "dir",
  "data-dir": "dir",
  "log-level": ["debug", "info", "warn", "error", "silent"],
};

/**
 * What the arguments of a command are: manifests (files or folders), one folder, words, or none.
 * @defaultValue "manifests", for a command not listed
 */
const POSITIONALS: Readonly<Record<string, "manifests" | "dir" | "none" | readonly string[]>> = {
  watch: "dir",
  sandbox: "none",
  // Job names (manifest/id): in the state, not the folder; no suggestion rather than a file name.
  approve: "none",
  reject: "none",
  undecide: "none",
  retake: "none",
  completion: SHELLS,
};

interface FlagSpec {
  readonly name: string;
  readonly takesValue: boolean;
  readonly repeatable: boolean;
  readonly value: ValueKind;
  readonly description: string;
}

interface CommandSpec {
  readonly name: string;
  readonly summary: string;
  readonly flags: readonly FlagSpec[];
  readonly positionals: "manifests" | "dir" | "none" | readonly string[];
}

/**
 * The option's line in a usage text, without the flag and its placeholder (`--out DIR  output
 * folder` gives "output folder"); an option listed with others (`--out, --concurrency`) gets the
 * line below the list. Cut at the line's end (a parenthesis left open there is dropped).
 */
function describeOption(usage: string, name: string): string {
  const flag = "--[\\w-]+(?:\\s[A-Z][A-Z.]*(?=[\\s,]|$))?";
  const line = new RegExp(
    `^\\s+(?:${flag},\\s*)*--${name}(?![\\w-])(?:\\s[A-Z][A-Z.]*(?=[\\s,]|$))?((?:,\\s*${flag})*)(.*)$`,
  );
  const lines = usage.split("\n");
  const at = lines.findIndex((l) => line.test(l));
  if (at < 0) return "";
  const [, listed = "", rest = ""] = line.exec(lines[at]!)!;
  let text = listed === "" && rest.trim() !== "" ? rest.trim() : (lines[at + 1] ?? "").trim();
  if (text.startsWith("--")) return "";
  const open = text.lastIndexOf(" (");
  if (open > 0 && text.indexOf(")", open) < 0) text = text.slice(0, open);
  return text.length > 72 ? `${text.slice(0, 71)}…` : text;
}

function specOf(command: Command, summary: string): CommandSpec {
  const flags: FlagSpec[] = Object.entries(command.options).map(([name, option]) => ({
    name,
    takesValue: option.type === "string",
    repeatable: option.multiple === true,
    value: option.type === "string" ? (OPTION_VALUES[name] ?? "none") : "none",
    description: describeOption(command.usage, name),
  }));
  flags.push({
    name: "help",
    takesValue: false,
    repeatable: false,
    value: "none",
    description: "show the options",
  });
  return {
    name: command.name,
    summary,
    flags,
    positionals: POSITIONALS[command.name] ?? "manifests",
  };
}

// ---- bash ----

const words = (list: readonly string[]): string => list.join(" ");

function bashValue(kind: ValueKind): string {
  if (kind === "file") return `_reel_files "$cur"`;
  if (kind === "dir") return `_reel_dirs "$cur"`;
  if (kind === "none") return ":";
  return `COMPREPLY=($(compgen -W "${words(kind)}" -- "$cur"))`;
}

function bashScript(specs: readonly CommandSpec[]): string {
  const names = specs.map((s) => s.name);
  const valueCases = specs.flatMap((spec) =>
    spec.flags
      .filter((flag) => flag.takesValue)
      .map((flag) => `    ${spec.name}:--${flag.name}) ${bashValue(flag.value)}; return 0 ;;`),
  );
  const flagCases = specs.map(
    (spec) =>
      `      ${spec.name}) COMPREPLY=($(compgen -W "${words(spec.flags.map((f) => `--${f.name}`))}" -- "$cur")) ;;`,
  );
  const argCases = specs.map((spec) => {
    const p = spec.positionals;
    const action =
      p === "manifests"
        ? `_reel_manifests "$cur"`
        : p === "dir"
          ? `_reel_dirs "$cur"`
          : p === "none"
            ? ":"
            : `COMPREPLY=($(compgen -W "${words(p)}" -- "$cur"))`;
    return `    ${spec.name}) ${action} ;;`;
  });
  return `# bash completion for reel. Load it with:  source <(reel completion bash)
# or save it:  reel completion bash > ~/.local/share/bash-completion/completions/reel
_reel_files() {
  compopt -o filenames 2>/dev/null
  local IFS=$'\\n'
  COMPREPLY=($(compgen -f -- "$1"))
}
_reel_dirs() {
  compopt -o filenames 2>/dev/null
  local IFS=$'\\n'
  COMPREPLY=($(compgen -d -- "$1"))
}
# Manifests: *.yaml / *.yml files, and folders (reel reads the manifests in them).
_reel_manifests() {
  compopt -o filenames 2>/dev/null
  local IFS=$'\\n'
  COMPREPLY=($(compgen -d -- "$1") $(compgen -f -X '!*.y*ml' -- "$1"))
}
_reel() {
  local cur prev cmd
  COMPREPLY=()
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  if [[ $COMP_CWORD -le 1 ]]; then
    COMPREPLY=($(compgen -W "${words(names)} help --help --version" -- "$cur"))
    return 0
  fi
  cmd="\${COMP_WORDS[1]}"
  if [[ $cmd == help ]]; then
    [[ $COMP_CWORD -eq 2 ]] && COMPREPLY=($(compgen -W "${words(names)}" -- "$cur"))
    return 0
  fi
  case "$cmd:$prev" in
${valueCases.join("\n")}
  esac
  if [[ $cur == -* ]]; then
    case "$cmd" in
${flagCases.join("\n")}
    esac
    return 0
  fi
  case "$cmd" in
${argCases.join("\n")}
  esac
  return 0
}
complete -F _reel reel
`;
}

// ---- zsh ----

/** Text inside a single-quoted zsh word, as an _arguments description (no brackets). */
function zshText(text: string): string {
  return text.replace(/\[/g, "(").replace(/\]/g, ")").replace(/:/g, " -").replace(/'/g, "'\\''");
}

function zshAction(kind: ValueKind): string {
  if (kind === "file") return "_files";
  if (kind === "dir") return "_files -/";
  if (kind === "none") return " ";
  return `(${kind.join(" ")})`;
}

function zshScript(specs: readonly CommandSpec[]): string {
  // In _describe's list only the first colon separates the name: the summary keeps its own.
  const commandLines = specs.map((s) => `    '${s.name}:${s.summary.replace(/'/g, "'\\''")}'`);
  const cases = specs.map((spec) => {
    const args = spec.flags.map((flag) => {
      const head = `${flag.repeatable ? "*" : ""}--${flag.name}[${zshText(flag.description)}]`;
      return flag.takesValue ? `'${head}:${flag.name}:${zshAction(flag.value)}'` : `'${head}'`;
    });
    const p = spec.positionals;
    if (p === "manifests") args.push(`'*:manifest file or folder:_files -g "*.(yaml|yml)"'`);
    else if (p === "dir") args.push(`'1:folder:_files -/'`);
    else if (p !== "none") args.push(`'1:${spec.name}:(${p.join(" ")})'`);
    return `    ${spec.name})\n      _arguments -s \\\n        ${args.join(" \\\n        ")}\n      ;;`;
  });
  return `#compdef reel
# zsh completion for reel. Load it with:  source <(reel completion zsh)   (after compinit)
# or save it as _reel in a folder of your $fpath.
_reel() {
  local -a commands
  commands=(
${commandLines.join("\n")}
  )
  if (( CURRENT == 2 )); then
    _describe -t commands 'reel command' commands
    return
  fi
  local cmd=\${words[2]}
  shift words
  (( CURRENT-- ))
  case $cmd in
${cases.join("\n")}
    help)
      _describe -t commands 'reel command' commands
      ;;
  esac
}
if [[ \${zsh_eval_context[-1]} == loadautofunc ]]; then
  _reel "$@"
else
  compdef _reel reel
fi
`;
}

// ---- fish ----

/** Text inside a single-quoted fish word. */
function fishText(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/'/g, "\\'");
}

function fishScript(specs: readonly CommandSpec[]): string {
  const names = specs.map((s) => s.name);
  const lines = [
    "# fish completion for reel. Load it with:  reel completion fish | source",
    "# or save it:  reel completion fish > ~/.config/fish/completions/reel.fish",
    "complete -c reel -f",
    ...specs.map(
      (s) => `complete -c reel -n '__fish_use_subcommand' -a ${s.name} -d '${fishText(s.summary)}'`,
    ),
    `complete -c reel -n '__fish_seen_subcommand_from help' -a '${names.join(" ")}'`,
  ];
  for (const spec of specs) {
    const when = `-n '__fish_seen_subcommand_from ${spec.name}'`;
    for (const flag of spec.flags) {
      const description = flag.description === "" ? "" : ` -d '${fishText(flag.description)}'`;
      let value = "";
      if (flag.takesValue) {
        const kind = flag.value;
        if (kind === "file") value = " -r -F";
        else if (kind === "dir") value = " -x -a '(__fish_complete_directories)'";
        else if (kind === "none") value = " -x";
        else value = ` -x -a '${kind.join(" ")}'`;
      }
      lines.push(`complete -c reel ${when} -l ${flag.name}${value}${description}`);
    }
    const p = spec.positionals;
    if (p === "manifests") lines.push(`complete -c reel ${when} -F`);
    else if (p === "dir") lines.push(`complete -c reel ${when} -x -a '(__fish_complete_directories)'`);
    else if (p !== "none") lines.push(`complete -c reel ${when} -x -a '${p.join(" ")}'`);
  }
  return `${lines.join("\n")}\n`;
}

/** The completion script of `shell` for these commands. */
export function completionScript(
  shell: Shell,
  commands: readonly { readonly command: Command; readonly summary: string }[],
): string {
  const specs = commands.map((c) => specOf(c.command, c.summary));
  if (shell === "bash") return bashScript(specs);
  if (shell === "zsh") return zshScript(specs);
  return fishScript(specs);
}

/**
 * The command, over the command table `commands` gives when it runs: passed in rather than imported,
 * since the table lists this command too.
 */
export const makeCompletionCommand = (commands: () => readonly CommandEntry[]): Command => ({
  name: "completion",
  usage: `Usage: reel completion bash|zsh|fish

Prints a script that completes reel's commands, their options, and file and folder names.
  bash:  source <(reel completion bash)        (add the line to ~/.bashrc)
  zsh:   source <(reel completion zsh)         (after compinit, in ~/.zshrc)
  fish:  reel completion fish | source         (or save it in ~/.config/fish/completions/reel.fish)`,
  options: {},
  async run(args: ParsedArgs, io: CliIO): Promise<number> {
    const [shell, extra] = args.positionals;
    const known = SHELLS.find((s) => s === shell);
    if (!known || extra !== undefined) {
      throw new UsageError(
        shell === undefined
          ? "name the shell: reel completion bash, zsh or fish"
          : `expected one shell (bash, zsh or fish), got '${args.positionals.join(" ")}'`,
      );
    }
    // A script: never broken to a terminal's width.
    const loaded = await Promise.all(
      commands().map(async (entry) => ({ command: await entry.load(), summary: entry.summary })),
    );
    rawStream(io.stdout).write(completionScript(known, loaded));
    return EXIT.ok;
  },
});
