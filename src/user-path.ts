// Paths as the user sees them. Messages name a path relative to the folder reel was started in when
// it lies inside it (as the user would type it), and whole when it does not ("../../srv/x" says
// less than "/srv/x"). The cwd is always passed in, never read from the process: the engine and the
// watcher run inside tests and other programs whose own folder means nothing to their user.
import { isAbsolute, relative, sep } from "node:path";

/** `rel` (a path.relative answer) does not climb out of its base: "..b/x" is a folder named "..b". */
function staysInside(rel: string): boolean {
  return rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/** Whether `child` is `parent` or lies under it (both absolute). */
export function isInside(child: string, parent: string): boolean {
  return staysInside(relative(parent, child));
}

/**
 * `target` as the user would write it from `cwd`: relative when inside ("." for cwd itself), whole
 * otherwise. What is not an absolute path (an https address, a path kept as given) is shown as it is.
 */
export function shownPath(cwd: string | undefined, target: string): string {
  if (cwd === undefined || !isAbsolute(target)) return target;
  const rel = relative(cwd, target);
  if (rel === "") return ".";
  return staysInside(rel) ? rel : target;
}
