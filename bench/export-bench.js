// `reel export` of many videos: hard links into DIR, the sheets and the ledger, then a second export
// that writes nothing. Prints figures; asserts nothing.
//   BENCH_VIDEOS=10000 node bench/export-bench.js   (after `npm run build`)
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportVideos } from "../dist/export/export.js";
import { stampOfPath } from "../dist/output/video-check.js";

const count = Number(process.env.BENCH_VIDEOS ?? 10_000);
const root = mkdtempSync(join(tmpdir(), "reel-export-bench-"));
try {
  const out = join(root, "out");
  mkdirSync(join(out, "promo"), { recursive: true });
  const items = [];
  for (let i = 0; i < count; i++) {
    // A small distinct file per video: the bench measures the export, not the disk's bandwidth.
    const bytes = Buffer.from(`video ${i} `.repeat(400));
    const file = `promo/promo-${i}.mp4`;
    writeFileSync(join(out, file), bytes);
    const row = {
      job_key: `promo/promo-${i}`,
      manifest: "promo",
      video_id: `promo-${i}`,
      spec_hash: "h",
      spec_json: JSON.stringify({ model: "actor-2", seed: i, chunks: [{ duration: 5 }] }),
      seconds: 5,
      model: "actor-2",
      state: "Success",
      task_id: String(i),
      file,
      out_dir: out,
      created_at: Date.now(),
      finished_at: Date.now(),
      downloaded_at: Date.now(),
      file_size: bytes.length,
      file_sha256: createHash("sha256").update(bytes).digest("hex"),
      file_stamp: stampOfPath(join(out, file)),
      base_url: "sandbox",
    };
    items.push({ row, decision: undefined, variables: { n: i }, source: join(out, file) });
  }
  const options = {
    dir: join(root, "delivery"),
    items,
    template: "{manifest}/{id}.mp4",
    sheets: ["csv", "jsonl"],
    prune: false,
  };
  let start = performance.now();
  const first = await exportVideos(options);
  const firstMs = performance.now() - start;
  start = performance.now();
  const second = await exportVideos(options);
  const secondMs = performance.now() - start;
  console.log(
    `export ${count} videos: ${(firstMs / 1000).toFixed(2)} s (${first.linked.length} hard-linked, ${first.copied.length} copied); again ${(secondMs / 1000).toFixed(2)} s (${second.unchanged.length} unchanged, ${second.linked.length + second.copied.length} written)`,
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}
