// The manifests under a command's PATHs, for the commands that read the state only (status, clean):
// loaded for their names and videos, with the video limit the run of them used.
import { UsageError } from "../errors/usage.js";
import { checkAllowRead, type LoadResult, loadManifests } from "../manifest/index.js";
import type { CliIO, ParsedArgs } from "./command.js";
import { maxVideosOf } from "./max-videos.js";
import { withProjectRoot, type Workplace } from "./workplace.js";

/** The manifests found under PATHs, undefined when none is given; refused when none can be named. */
export async function manifestsNamed(
  args: ParsedArgs,
  io: CliIO,
  place: Workplace,
): Promise<LoadResult | undefined> {
  if (args.positionals.length === 0) return undefined;
  const allowRead = (args.values["allow-read"] as string[] | undefined) ?? [];
  await checkAllowRead(allowRead, io.cwd);
  const loaded = await loadManifests(args.positionals, {
    cwd: io.cwd,
    allowRead: withProjectRoot(allowRead, place),
    // Only the manifests' names and videos are needed: media files are not read (a gigabyte of them
    // would make every `status PATH` hash it all again).
    hashFile: () => Promise.resolve(""),
    // The limit run reads them with: a manifest it ran past the default is read here too.
    maxVideos: maxVideosOf(args, io, place.project),
  });
  if (loaded.names.length === 0) {
    throw new UsageError(
      `no readable manifest in ${args.positionals.join(" ")}; run 'reel validate' to see why`,
    );
  }
  return loaded;
}
