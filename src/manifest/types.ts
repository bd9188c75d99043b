// The "resolved" side of a manifest: what the rest of reel (plan, engine, state) works with.
// The "as written" side is inferred from the schema (schema.ts: ManifestInput).
import type { AspectRatio, Id, Model, Resolution } from "../service-contract/api-types.js";
import type { MediaFormat } from "../service-contract/media-format.js";
import type { FileStamp, OpenedFile } from "./validate/media-file.js";
import type { Problem, Warning } from "./problem.js";

/** An asset the request refers to: a local file (by content), a remote file, or one already uploaded. */
export type AssetRef =
  | {
      kind: "file";
      /** Absolute path, symlinks resolved. */
      path: string;
      /** sha256 of the content, hex. */
      sha256: string;
      size: number;
      /** Recognised from the content, not the name. */
      format: MediaFormat;
      /** The file that was judged: the upload sends this one (same device and inode) or nothing. */
      stamp: FileStamp;
    }
  | {
      kind: "url";
      url: string;
      /** What the request uses it as: checked once fetched, before it is uploaded. */
      use: "image" | "audio";
    }
  | { kind: "asset"; id: Id };

/** Audio that reel generates with POST /v1/audios before the generation. */
export interface SpeechRef {
  kind: "speech";
  voiceId: Id;
  text: string;
}

export interface JobChunk {
  duration: number;
  text?: string;
  audio?: AssetRef | SpeechRef;
  enablePromptEnhancement?: boolean;
}

/** Exactly the request that will be sent, with assets as references instead of ids. */
export interface JobSpec {
  model: Model;
  resolution?: Resolution;
  aspectRatio?: AspectRatio;
  seed?: number;
  source?: AssetRef;
  chunks: JobChunk[];
}

/** One video of one manifest. */
export interface Job {
  /** The manifest's name. */
  manifest: string;
  id: string;
  /** `manifest/id`: the job's identity across runs. */
  key: string;
  /** sha256 of the canonical spec (see spec-hash.ts): changes whenever what is sent changes. */
  specHash: string;
  spec: JobSpec;
  /** Seconds of video: the sum of the chunk durations. */
  seconds: number;
  model: Model;
  /** Where the video is written in its manifest. */
  line: number;
  col: number;
  /**
   * The placeholders' values of the combination it was expanded from (a matrix video): not part of
   * the request (the spec has them substituted), kept so that a delivery sheet joins back to them.
   */
  variables?: Readonly<Record<string, string | number | boolean>>;
  /** The CSV row it was made from (a video of `rows:`): `plan --explain` names the cell a change came from. */
  row?: RowOrigin;
}

/** Where a job of `rows:` comes from in its CSV. Shared by the jobs of one row; its templates by every row. */
export interface RowOrigin {
  /** The CSV, absolute. */
  readonly file: string;
  /** The physical line the row starts at. */
  readonly line: number;
  readonly header: readonly string[];
  /**
   * Each request field written with a column's placeholder (`chunks[0].text`, `source`,
   * `chunks[0].speech.voice`, as explain names fields), and its text as written: "Hi {first_name}".
   */
  readonly templates: ReadonlyMap<string, string>;
}

export interface NormalizedManifest {
  name: string;
  /** The file, relative to the folder reel was started in (absolute when outside it). */
  file: string;
  jobs: Job[];
}

export interface LoadOptions {
  /** The folder reel was started in: relative paths on the command line and in messages start here. */
  readonly cwd: string;
  /** More folders manifests may read files from (`--allow-read DIR`), relative to cwd or absolute. */
  readonly allowRead?: readonly string[];
  /**
   * sha256 hex of the content of `opened`, the file at `absPath` as it was opened for its checks.
   * @defaultValue reads the descriptor through node:crypto
   */
  readonly hashFile?: (absPath: string, opened: OpenedFile) => Promise<string>;
  /** Largest manifest file read, in bytes. @defaultValue 16 MiB */
  readonly maxFileBytes?: number;
  /**
   * The most videos each manifest, and all of them together, may make (video-count.ts).
   * @defaultValue DEFAULTS.maxVideos
   */
  readonly maxVideos?: number;
}

export interface LoadResult {
  manifests: NormalizedManifest[];
  problems: Problem[];
  /**
   * What may not be what the writer meant, in valid and invalid files alike (a comment after a
   * text): printed with the fix; a file with only warnings loads.
   */
  warnings: Warning[];
  /**
   * The name of every manifest file found, valid or not, when it has one: what `status PATH` shows,
   * so a manifest broken by an edit still shows the jobs it already ran.
   */
  names: string[];
  /**
   * The CSV files of the manifests' `rows:` that were found (absolute, links followed), valid or
   * not: a watcher reads a manifest again when one of its CSVs changes.
   */
  rowsFiles: string[];
}
