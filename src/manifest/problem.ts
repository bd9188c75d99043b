// A problem in a manifest, as data: the loader returns them, the CLI decides how to print them.

/**
 * One mistake, at `file:line:col` (1-based). `file` is relative to the folder reel was started in
 * (absolute when outside it). `line` and `col` are 0 when the problem is about the file as a
 * whole (a path on the command line that does not exist).
 */
export interface Problem {
  file: string;
  line: number;
  col: number;
  message: string;
  code: ProblemCode;
  /**
   * A media file the manifest names that is not there, or not whole (E_FILE_MISSING,
   * E_MEDIA_FORMAT), named as `file` is: a watcher waits for it.
   */
  media?: string;
}

/** Stable codes: scripts and tests branch on these, never on message text. */
export const PROBLEM_CODES = {
  notFound: "E_NOT_FOUND",
  readFailed: "E_READ",
  tooLarge: "E_FILE_TOO_LARGE",
  /** More videos than the limit, in a manifest or a run's manifests together (video-count.ts). */
  tooManyVideos: "E_TOO_MANY_VIDEOS",
  yamlSyntax: "E_YAML_SYNTAX",
  duplicateKey: "E_DUPLICATE_KEY",
  unknownTag: "E_UNKNOWN_TAG",
  aliasLimit: "E_ALIAS_LIMIT",
  unknownField: "E_UNKNOWN_FIELD",
  missingField: "E_MISSING_FIELD",
  invalidValue: "E_INVALID_VALUE",
  modelRule: "E_MODEL_RULE",
  duplicateId: "E_DUPLICATE_ID",
  duplicateName: "E_DUPLICATE_NAME",
  unsafeName: "E_UNSAFE_NAME",
  pathOutside: "E_PATH_OUTSIDE",
  fileMissing: "E_FILE_MISSING",
  fileUnreadable: "E_FILE_UNREADABLE",
  mediaKind: "E_MEDIA_KIND",
  mediaFormat: "E_MEDIA_FORMAT",
  badUrl: "E_BAD_URL",
  /** A text YAML reads shorter than it looks (`text: Shot #1` is "Shot"): fixed by quoting it. */
  textCut: "E_TEXT_CUT",
  /** Not of the file itself: its jobs were sent to another service (watch reports it here). */
  sentElsewhere: "E_OTHER_SERVICE",
} as const;

export type ProblemCode = (typeof PROBLEM_CODES)[keyof typeof PROBLEM_CODES];

/**
 * Something in a valid manifest that may not be what its writer meant: printed with the fix, the
 * manifest still runs. Stable codes, as problems'.
 */
export const WARNING_CODES = {
  /** A comment after a text (" # note"): left out of the text. */
  textComment: "W_TEXT_COMMENT",
  /** A text over several lines, one of which looks like a field or a list item. */
  textJoined: "W_TEXT_JOINED",
  /** A "#" line inside a | or > block: part of the text. */
  textCommentLine: "W_TEXT_COMMENT_LINE",
  /** A |+ or >+ block that keeps several line breaks at the end of the text. */
  textBlankLines: "W_TEXT_BLANK_LINES",
} as const;

export type WarningCode = (typeof WARNING_CODES)[keyof typeof WARNING_CODES];

/** A warning, placed as a problem is. */
export interface Warning extends Omit<Problem, "code"> {
  code: WarningCode;
}

export function compareProblems(a: Omit<Problem, "code">, b: Omit<Problem, "code">): number {
  return a.line - b.line || a.col - b.col || (a.message < b.message ? -1 : a.message > b.message ? 1 : 0);
}
