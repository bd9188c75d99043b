// OUT/index.html's embedded jobs, read back as the page's script reads them: each job is the array of
// its values, in the order of the field names the data carries.
import type { ReportJob } from "../../src/report/report-job.js";

export function embeddedJobs(html: string): ReportJob[] {
  const match = /<script type="application\/json" id="reel-data">([\s\S]*?)<\/script>/.exec(html);
  if (!match) throw new Error("no #reel-data in the page");
  const data = JSON.parse(match[1]!) as { jobs: string[]; chunks: string[]; rows: unknown[][] };
  const named = (names: string[], values: unknown[]) =>
    Object.fromEntries(names.map((name, n) => [name, values[n]]));
  return data.rows.map((values) => {
    const job = named(data.jobs, values);
    return {
      ...job,
      chunks: (job.chunks as unknown[][]).map((c) => named(data.chunks, c)),
    } as unknown as ReportJob;
  });
}
