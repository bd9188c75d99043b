// Takes (issue 19): `takes: N` makes N jobs of one video, each with its own seed, so that the user
// can choose among them. Their ids are `<id>~1` .. `<id>~N`: `~` can't be in a written id (see
// SAFE_NAME_PATTERN), so a take never clashes with a video, and its files are
// OUT/<manifest>/<id>~1.mp4, ... . Raising N adds takes; lowering it leaves the finished ones on disk.
import { createHash } from "node:crypto";

/** The id of take `n` (from 1) of video `id`. */
export function takeId(id: string, n: number): string {
  return `${id}~${n}`;
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
