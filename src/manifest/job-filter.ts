// `--only GLOB`: selects jobs by their key `manifest/id`. Node 20 has no stable path.matchesGlob,
// and keys are not paths anyway, so a small glob -> RegExp: `*` and `?` stay within one part,
// `**` crosses the `/`. A pattern without `/` matches the id in any manifest (`intro` = `*/intro`).

function escapeRegExp(char: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(char) ? `\\${char}` : char;
}

export function globToRegExp(glob: string): RegExp {
  const pattern = glob.includes("/") ? glob : `*/${glob}`;
  let source = "";
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (char === "*" && pattern[i + 1] === "*") {
      source += ".*";
      i++;
    } else if (char === "*") source += "[^/]*";
    else if (char === "?") source += "[^/]";
    else source += escapeRegExp(char);
  }
  return new RegExp(`^${source}$`);
}

/** Why `--only` may have matched nothing, for its message. */
export function onlyHint(globs: readonly string[]): string {
  return globs.some((g) => /[[\]{}]/.test(g))
    ? " ('*' and '?' are the only wildcards: [...] and {...} are taken as they are written; jobs are named manifest/id)"
    : " (jobs are named manifest/id)";
}

/** A predicate on job keys: true when any glob matches, or always when no glob is given. */
export function makeJobFilter(globs: readonly string[]): (key: string) => boolean {
  if (globs.length === 0) return () => true;
  const patterns = globs.map(globToRegExp);
  return (key) => patterns.some((p) => p.test(key));
}
