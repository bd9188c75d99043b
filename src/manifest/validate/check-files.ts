// Checks a schema can't express, on the media a manifest names: local files exist, are readable,
// stay inside the allowed folders (also after following symlinks), and are of the kind expected by
// their content; remote sources are https URLs. Results are cached per path for the whole load, so
// 10,000 videos sharing three files cost three look-ups and three hashes. Each file is opened once:
// its kind, its hash and its stamp (what the upload checks it against) all come from that descriptor.
import { realpath } from "node:fs/promises";
import path from "node:path";
import {
  expectedWords,
  kindOf,
  MEDIA_FORMATS,
  type MediaFormat,
  type MediaKind,
  SNIFF_BYTES,
  sniffFormat,
} from "../../service-contract/media-format.js";
import { sha256OfOpened } from "../../sha256.js";
import { findCorruptionIn } from "../../service-contract/media-integrity.js";
import { isInside } from "../../user-path.js";
import {
  type FileStamp,
  isLinkRefusal,
  type OpenedFile,
  openedPath,
  openNoFollow,
  stampOf,
} from "./media-file.js";
import { PROBLEM_CODES, type ProblemCode } from "../problem.js";
import type { AssetRef } from "../types.js";

/** What a field expects: a source is an image, an audio is audio. */
export type MediaUse = "image" | "audio";

export type MediaCheck =
  | { ok: true; ref: AssetRef }
  | {
      ok: false;
      message: string;
      code: ProblemCode;
      /**
       * The local file (absolute) when it is not there, or not a whole media file: a copy that may
       * still land (a watcher waits for it).
       */
      file?: string;
    };

/** sha256 hex of an opened file, read from its start. */
export function hashFileStreaming(_absPath: string, opened: OpenedFile): Promise<string> {
  return sha256OfOpened(opened.handle);
}

type Resolved =
  | {
      ok: true;
      real: string;
      size: number;
      format: MediaFormat | undefined;
      stamp: FileStamp;
      /** Of files whose format could be used (image or audio). */
      hash: Promise<string> | undefined;
    }
  | { ok: false; message: string; code: ProblemCode };

export interface FileCheckerOptions {
  /** The folder reel was started in. */
  readonly cwd: string;
  /** Folders files may be read from (cwd included), as given (absolute). */
  readonly allowed: readonly string[];
  readonly hashFile: (absPath: string, opened: OpenedFile) => Promise<string>;
}

/** Runs at most `max` tasks at once (file handles are finite: 10,000 distinct files must not open at once). */
function makeLimiter(max: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (running >= max) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await task();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

/** One per load: holds the caches. */
export class FileChecker {
  private readonly limit = makeLimiter(16);
  private readonly resolved = new Map<string, Promise<Resolved>>();
  /** By file (device, inode, size, mtime): two links to one file are hashed once. */
  private readonly hashes = new Map<string, Promise<string>>();
  private allowedReal: Promise<string[]> | undefined;

  constructor(private readonly options: FileCheckerOptions) {}

  /** The folders files may be read from (a rows CSV too). */
  get allowedDirs(): readonly string[] {
    return this.options.allowed;
  }

  /**
   * Checks one media string of a manifest (a path relative to `manifestDir`, or an https URL)
   * used as `field` ("source", "audio"). `written` is the text as the user wrote it, for messages.
   */
  async check(written: string, manifestDir: string, field: string, use: MediaUse): Promise<MediaCheck> {
    if (/^[A-Za-z][A-Za-z0-9+.-]+:/.test(written)) return checkUrl(written, field, use);
    if (written.includes("\0")) {
      return {
        ok: false,
        message: `${field} path contains a NUL character`,
        code: PROBLEM_CODES.invalidValue,
      };
    }
    const abs = path.resolve(manifestDir, written);
    let entry = this.resolved.get(abs);
    if (!entry) {
      entry = this.limit(() => this.resolve(abs, written));
      this.resolved.set(abs, entry);
    }
    const found = await entry;
    if (!found.ok) {
      const landing = found.code === PROBLEM_CODES.fileMissing || found.code === PROBLEM_CODES.mediaFormat;
      return {
        ok: false,
        message: `${field} ${found.message}`,
        code: found.code,
        ...(landing ? { file: abs } : {}),
      };
    }
    if (found.format === undefined) {
      return {
        ok: false,
        message: `${field} must be ${expectedWords(use)}; ${written} is ${found.size === 0 ? "empty" : "not a file of an accepted format"}`,
        code: PROBLEM_CODES.mediaFormat,
        file: abs,
      };
    }
    const kind: MediaKind = kindOf(found.format);
    if (kind !== use) {
      return {
        ok: false,
        message: `${field} must be ${expectedWords(use)}; ${written} is ${MEDIA_FORMATS[found.format].words}`,
        code: PROBLEM_CODES.mediaKind,
      };
    }
    try {
      return {
        ok: true,
        ref: {
          kind: "file",
          path: found.real,
          sha256: await found.hash!,
          size: found.size,
          format: found.format,
          stamp: found.stamp,
        },
      };
    } catch (error) {
      return {
        ok: false,
        message: `${field} ${written} could not be read: ${reason(error)}`,
        code: PROBLEM_CODES.fileUnreadable,
      };
    }
  }

  private allowedRealDirs(): Promise<string[]> {
    this.allowedReal ??= Promise.all(
      this.options.allowed.map((dir) => realpath(dir).catch(() => path.resolve(this.options.cwd, dir))),
    );
    return this.allowedReal;
  }

  private async resolve(abs: string, written: string): Promise<Resolved> {
    const allowed = this.options.allowed.map((dir) => path.resolve(this.options.cwd, dir));
    // Checked on the path as written first, so a manifest cannot even probe which files exist
    // outside the allowed folders.
    if (!allowed.some((dir) => isInside(abs, dir))) {
      return {
        ok: false,
        message: `${written} is outside the folder reel was started in (${this.options.cwd}); allow it with --allow-read DIR`,
        code: PROBLEM_CODES.pathOutside,
      };
    }
    let real: string;
    try {
      real = await realpath(abs);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") {
        // A shell expands ~, YAML does not.
        const hint = /^~[/\\]/.test(written)
          ? " (~ is not your home folder here: write the path in full, or relative to the manifest)"
          : "";
        return {
          ok: false,
          message: `${JSON.stringify(written)} does not exist${hint}`,
          code: PROBLEM_CODES.fileMissing,
        };
      }
      return {
        ok: false,
        message: `${written} could not be read: ${reason(error)}`,
        code: PROBLEM_CODES.fileUnreadable,
      };
    }
    const allowedReal = await this.allowedRealDirs();
    if (!allowedReal.some((dir) => isInside(real, dir))) {
      return {
        ok: false,
        message: `${written} is a link to ${real}, outside the folder reel was started in (${this.options.cwd}); allow it with --allow-read DIR`,
        code: PROBLEM_CODES.pathOutside,
      };
    }
    let handle;
    try {
      handle = await openNoFollow(real);
    } catch (error) {
      // The path resolved to a file, then named a link: it changed under the check.
      const why = isLinkRefusal(error) ? "it was replaced by a link while it was checked" : reason(error);
      return {
        ok: false,
        message: `${written} could not be read: ${why}`,
        code: PROBLEM_CODES.fileUnreadable,
      };
    }
    try {
      const opened: OpenedFile = { handle, stamp: stampOf(await handle.stat({ bigint: true })) };
      const info = await handle.stat();
      if (!info.isFile()) {
        const what = info.isDirectory() ? "a folder" : "not a regular file";
        return {
          ok: false,
          message: `${written} is ${what}, not a media file`,
          code: PROBLEM_CODES.fileUnreadable,
        };
      }
      const where = await openedPath(opened, real);
      if (where === undefined || !allowedReal.some((dir) => isInside(where, dir))) {
        return {
          ok: false,
          message: `${written} is a link to ${where ?? "a file"}, outside the folder reel was started in (${this.options.cwd}); allow it with --allow-read DIR`,
          code: PROBLEM_CODES.pathOutside,
        };
      }
      const head = new Uint8Array(SNIFF_BYTES);
      const { bytesRead } = await handle.read(head, 0, SNIFF_BYTES, 0);
      const format = sniffFormat(head.subarray(0, bytesRead));
      // Cut short or broken (an interrupted copy or download): the service would refuse the upload.
      const broken = format && (await findCorruptionIn(handle, format, opened.stamp.size));
      if (format && broken) {
        return {
          ok: false,
          message: `${written} looks like ${MEDIA_FORMATS[format].words} but is cut short or damaged (${broken}); copy or download it again`,
          code: PROBLEM_CODES.mediaFormat,
        };
      }
      const usable = format !== undefined && (kindOf(format) === "image" || kindOf(format) === "audio");
      const { stamp } = opened;
      const key = `${stamp.dev}:${stamp.ino}:${stamp.size}:${stamp.mtimeNs}`;
      let hash = usable ? this.hashes.get(key) : undefined;
      if (usable && !hash) {
        hash = this.options.hashFile(real, opened);
        this.hashes.set(key, hash);
      }
      // Read while the descriptor is open; a failure is the field's problem, said by check().
      await hash?.catch(() => undefined);
      return { ok: true, real, size: stamp.size, format, stamp, hash };
    } catch (error) {
      return {
        ok: false,
        message: `${written} could not be read: ${reason(error)}`,
        code: PROBLEM_CODES.fileUnreadable,
      };
    } finally {
      await handle.close();
    }
  }
}

function checkUrl(written: string, field: string, use: MediaUse): MediaCheck {
  let url: URL;
  try {
    url = new URL(written);
  } catch {
    return {
      ok: false,
      message: `${field} ${JSON.stringify(written)} is not a valid URL`,
      code: PROBLEM_CODES.badUrl,
    };
  }
  if (url.protocol !== "https:") {
    return {
      ok: false,
      message: `${field} must be a local path or an https URL; ${JSON.stringify(written)} is not https`,
      code: PROBLEM_CODES.badUrl,
    };
  }
  if (url.hostname === "") {
    return {
      ok: false,
      message: `${field} ${JSON.stringify(written)} has no host`,
      code: PROBLEM_CODES.badUrl,
    };
  }
  return { ok: true, ref: { kind: "url", url: url.href, use } };
}

function reason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "EISDIR") return "it is a folder";
  return (error as Error).message ?? String(error);
}
