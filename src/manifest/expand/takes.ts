// Takes: `takes: N` makes N jobs of one video, each with its own seed, so that the user
// can choose among them. Their ids are `<id>~1` .. `<id>~N`: `~` can't be in a written id (see
// SAFE_NAME_PATTERN), so a take never clashes with a video, and its files are
// OUT/<manifest>/<id>~1.mp4, ... . Raising N adds takes; lowering it leaves the finished ones on disk.
import { createHash } from "node:crypto";

/** The id of take `n` (from 1) of video `id`. */
export function takeId(id: string, n: number): string {
  return `${id}~${n}`;
}

/**
 * The video a job's id is a take of, and which take: `intro~3` is take 3 of `intro`; `intro` (a video
 * without takes) is its own first take.
 */
export function takeOf(id: string): { readonly video: string; readonly n: number } {
  const match = /^(.*)~(\d+)$/.exec(id);
  return match ? { video: match[1]!, n: Number(match[2]) } : { video: id, n: 1 };
}

/** Whether job id `id` is a take of video `video` (`video` itself, or `video~N`). */
export function isTakeOf(id: string, video: string): boolean {
  return id === video || (id.startsWith(`${video}~`) && /^\d+$/.test(id.slice(video.length + 1)));
}

/**
 * The seed of a take whose video gives none: fixed by the take's identity (manifest and take id), so
 * that a rerun makes the same jobs rather than new ones, and two takes differ. A 31-bit number, which
 * any service takes.
 */
export function takeSeed(manifest: string, id: string): number {
  const digest = createHash("sha256").update(`reel take\n${manifest}/${id}`).digest();
  return digest.readUInt32BE(0) & 0x7fffffff;
}

/**
 * The seed of take `n` of `video`: the video's seed counted up (`seed + n - 1`), or without one
 * takeSeed of the take. The one rule for the takes a manifest lists and for retakes, so a retake and
 * the take of the same number a manifest lists later are the same job.
 */
export function seedOfTake(
  manifest: string,
  video: string,
  n: number,
  videoSeed: number | undefined,
): number {
  return videoSeed !== undefined ? videoSeed + n - 1 : takeSeed(manifest, takeId(video, n));
}
