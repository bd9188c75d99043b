// --notify URL, --allow-private-notify and --on-end CMD of `run` and `watch` (src/notify/): read and
// checked before anything starts, so a refused target is exit 2 with nothing sent.
import { UsageError } from "../errors/usage.js";
import { checkTargetAddresses, type NotifyTarget, splitNotifyList, targetOf } from "../notify/targets.js";
import type { CliIO, OptionsConfig, ParsedArgs } from "./command.js";
import { envSetting } from "./workplace.js";
import type { ServiceSettings } from "./service-options.js";

export const NOTIFY_OPTIONS: OptionsConfig = {
  notify: { type: "string", multiple: true },
  "allow-private-notify": { type: "boolean" },
  "on-end": { type: "string" },
};

export const NOTIFY_USAGE = `  --notify URL           post a JSON message (a "text" for Slack or Mattermost, and the event) to URL
                         when the run ends, a manifest finishes (watch), the run stops or pauses,
                         the budget passes 80% and 100%, and jobs fail (at most once a minute);
                         repeatable. Also REEL_NOTIFY (URLs separated by spaces or commas) and
                         notify: in reel.yaml. Signed when REEL_NOTIFY_SECRET is set
                         (X-Reel-Signature: sha256=HMAC). See docs/operations.md
  --allow-private-notify let notify: in reel.yaml post to loopback, link-local and private
                         addresses (refused by default, as for https sources)
  --on-end CMD           run CMD through the shell when the run ends, with REEL_OUTCOME,
                         REEL_EXIT_CODE, REEL_DONE, REEL_FAILED, REEL_UNCERTAIN in its environment
                         (also REEL_ON_END; never from reel.yaml). Its failure changes no exit code`;

export interface NotifySettings {
  readonly targets: readonly NotifyTarget[];
  readonly secret?: string;
  readonly onEnd?: string;
}

/** The session's notification settings, checked; undefined when none is asked for. */
export async function readNotifySettings(
  args: ParsedArgs,
  io: CliIO,
  settings: ServiceSettings,
): Promise<NotifySettings | undefined> {
  const allowPrivate = args.values["allow-private-notify"] === true;
  const flags = (args.values.notify as string[] | undefined) ?? [];
  const fromEnv = splitNotifyList(envSetting(io.env, "REEL_NOTIFY") ?? "");
  const fromProject = settings.place.project?.notify ?? [];
  const targets = [
    ...flags.map((url) => targetOf(url, "--notify", allowPrivate)),
    ...fromEnv.map((url) => targetOf(url, "REEL_NOTIFY", allowPrivate)),
    ...fromProject.map((url) => targetOf(url, "reel.yaml", allowPrivate)),
  ];
  const onEndFlag = args.values["on-end"];
  if (typeof onEndFlag === "string" && onEndFlag.trim() === "") {
    throw new UsageError("--on-end was given an empty command");
  }
  const onEnd = typeof onEndFlag === "string" ? onEndFlag : envSetting(io.env, "REEL_ON_END");
  if (targets.length === 0 && onEnd === undefined) return undefined;
  await checkTargetAddresses(targets);
  const secret = envSetting(io.env, "REEL_NOTIFY_SECRET");
  return {
    // One message per URL, however many times it was given.
    targets: targets.filter((t, i) => targets.findIndex((o) => o.url === t.url) === i),
    ...(secret !== undefined && { secret }),
    ...(onEnd !== undefined && { onEnd }),
  };
}
