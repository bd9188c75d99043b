// The order the test files start in: the longest first, so that the files left for the end are
// short and the workers end together (a worker that takes a long file last runs it alone while the
// others wait). vitest orders by what its cache says of the last run; a clean clone (CI) has no
// cache, and vitest then starts the biggest files first, which leaves the small slow ones (a fleet
// of processes, a pseudo-terminal, a learned poll schedule) to the end, one worker running them
// alone for tens of seconds. Here a file is placed by its duration in the cache if there is one,
// else by the seconds file-seconds.json says it took in a run of the suite (a hint: refresh it when
// a file gets much faster or slower), else last, biggest first.
import { readFileSync, statSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

const HINT = JSON.parse(readFileSync(new URL("./file-seconds.json", import.meta.url), "utf8")) as Record<
  string,
  number
>;

export class LongestFirst extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const known = (spec: TestSpecification): number | undefined => {
      const path = relative(root, spec.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${path}`);
      if (cached) return cached.duration;
      const hinted = HINT[path.split("\\").join("/")];
      return hinted === undefined ? undefined : hinted * 1_000;
    };
    const size = (spec: TestSpecification): number => statSync(spec.moduleId).size;
    const order = files.map((spec) => ({ spec, ms: known(spec), size: size(spec) }));
    order.sort((a, b) => {
      if (a.ms !== undefined && b.ms !== undefined) return b.ms - a.ms;
      if (a.ms !== undefined) return -1;
      if (b.ms !== undefined) return 1;
      return b.size - a.size;
    });
    return Promise.resolve(order.map(({ spec }) => spec));
  }
}
