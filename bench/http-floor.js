// The floor under engine-bench.js's overhead figure (run with it): reel's HTTP exchanges alone.
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleepMs } from "node:timers/promises";
import { downloadVideo } from "../dist/output/download.js";
import { childSandbox, clientOf } from "./batch-on-sandbox.js";

/**
 * The floor under the overhead figure: the same three exchanges per job (submit, poll, download) made
 * by reel's client and downloader alone, 64 at a time, with no engine, state file or records.
 */
export async function floor(base) {
  const N = Number(process.env.BENCH_JOBS ?? 10_000);
  const sandbox = await childSandbox(["--slots", "1000", "--time-scale", "0"]);
  const dir = mkdtempSync(join(base, "reel-bench-"));
  const client = clientOf(sandbox);
  try {
    const body = {
      model: "actor-2",
      resolution: "720p",
      chunks: [{ duration: 5, conditions: [{ type: "text", content: "floor" }] }],
    };
    const httpOrigins = [new URL(sandbox.baseUrl).origin];
    let next = 0;
    const cpu0 = process.cpuUsage();
    const worker = async () => {
      while (next < N) {
        const i = next++;
        const { id } = await client.submitGeneration(body);
        let task;
        do {
          await sleepMs(20); // the engine's first poll comes this soon after a submission, on a local service
          task = await client.getGeneration(id);
        } while (task.status !== "Success");
        await downloadVideo({
          url: task.resultVideoURL,
          dest: join(dir, `v${i}.mp4`),
          httpOrigins,
          dispatcher: client.dispatcher,
        });
      }
    };
    await Promise.all(Array.from({ length: 64 }, worker));
    const cpu = process.cpuUsage(cpu0);
    return [
      [
        "HTTP floor: submit + poll + download alone, CPU per job",
        `${((cpu.user + cpu.system) / 1000 / N).toFixed(3)} ms (user ${(cpu.user / 1000 / N).toFixed(3)}, system ${(cpu.system / 1000 / N).toFixed(3)})`,
      ],
    ];
  } finally {
    await client.close();
    sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
