// The matrix variables the review page shows and filters by. Job rows don't keep them (they are not
// part of the request), so the server reads them from the manifests: those given as PATH, or the
// manifests of the project's folder. A job whose manifest is gone, or no longer valid, is shown
// without them. Read again, at most every few seconds, when a video appears that was not in them
// (a manifest edited while a watch runs), and never again for a video still not found.
import { loadManifests } from "../../manifest/index.js";
import { takeOf } from "../../manifest/expand/takes.js";

export type Vars = Readonly<Record<string, string | number | boolean>>;

export interface ManifestVarsOptions {
  /** Manifest files or folders; none: the page reads no variables. */
  readonly paths: readonly string[];
  readonly cwd: string;
  /** Folders the manifests may read files from (their project's). */
  readonly allowRead: readonly string[];
  /** Whether `paths` limit the page to their manifests (PATH given), or only lend their variables. */
  readonly limit: boolean;
}

const RELOAD_MS = 5000;

export class ManifestVars {
  private vars = new Map<string, Vars>();
  private known = new Set<string>();
  private names: ReadonlySet<string> | undefined;
  private readonly unfound = new Set<string>();
  /** Videos asked for and not found since the last read. */
  private readonly missing = new Set<string>();
  private loading: Promise<void> | undefined;
  private loadedAt = 0;

  constructor(private readonly options: ManifestVarsOptions) {}

  /** Reads the manifests; a manifest that cannot be read lends nothing (its jobs still show). */
  async load(): Promise<void> {
    if (this.options.paths.length === 0) return;
    const loaded = await loadManifests([...this.options.paths], {
      cwd: this.options.cwd,
      allowRead: this.options.allowRead,
      // Only the videos are needed: media files are not hashed.
      hashFile: () => Promise.resolve(""),
    });
    const vars = new Map<string, Vars>();
    const known = new Set<string>();
    for (const manifest of loaded.manifests) {
      for (const job of manifest.jobs) {
        const video = `${manifest.name}/${takeOf(job.id).video}`;
        known.add(video);
        if (job.variables !== undefined) vars.set(video, job.variables);
      }
    }
    this.vars = vars;
    this.known = known;
    if (this.options.limit) this.names = new Set(loaded.names);
    this.loadedAt = Date.now();
  }

  /** Whether the page shows the jobs of `manifest`: every manifest, unless PATH names some. */
  shows(manifest: string): boolean {
    return this.names === undefined || this.names.has(manifest);
  }

  /** The variables of `manifest`'s video `video` (its id without the take), if a matrix made it. */
  of(manifest: string, video: string): Vars | null {
    const key = `${manifest}/${video}`;
    if (!this.known.has(key) && !this.unfound.has(key)) {
      this.missing.add(key);
      this.reload();
    }
    return this.vars.get(key) ?? null;
  }

  private reload(): void {
    if (this.options.paths.length === 0 || this.loading !== undefined) return;
    if (Date.now() - this.loadedAt < RELOAD_MS) return;
    const asked = [...this.missing];
    this.missing.clear();
    this.loading = this.load()
      .catch(() => undefined)
      .finally(() => {
        for (const key of asked) if (!this.known.has(key)) this.unfound.add(key);
        this.loading = undefined;
      });
  }
}
