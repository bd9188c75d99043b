// A session has one pool of connections (client/transport.ts): the engine's downloads go through the
// client's, whether the caller hands the engine a dispatcher or not, so that the connections a run
// opens are the ones its owner closes. A real engine, the sandbox over HTTP, a real state file.
import { join } from "node:path";
import { Agent, type Dispatcher } from "undici";
import { expect, it } from "vitest";
import { makeClient } from "../../src/client/index.js";
import { loadManifests } from "../../src/manifest/index.js";
import { runBatch } from "../../src/drivers/run-batch.js";
import { StateStore } from "../../src/state/sqlite/store.js";
import { writeTree } from "../helpers/cli.js";
import { useSandboxes } from "../helpers/sandboxes.js";
import { tempDir } from "../helpers/temp-dir.js";
import { summaryRows } from "../helpers/summary-rows.js";

const sandbox = useSandboxes();

/** An Agent that lists the requests sent through it. */
class ListingAgent extends Agent {
  readonly sent: string[] = [];
  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    this.sent.push(`${options.method} ${options.path}`);
    return super.dispatch(options, handler);
  }
}

it("downloads a run's videos through its client's connections when the engine is given none", async () => {
  const s = await sandbox();
  const dir = await tempDir();
  await writeTree(dir, {
    "m.yaml": `version: 1\nname: m\ndefaults: { model: actor-2, resolution: 720p }\nvideos:\n  - id: a\n    chunks: [{ duration: 5, text: "hello" }]\n`,
  });
  const { manifests } = await loadManifests(["m.yaml"], { cwd: dir });
  const agent = new ListingAgent();
  const store = StateStore.open(join(dir, "state.db"), { baseUrl: s.baseUrl });
  const client = makeClient({ baseUrl: s.baseUrl, apiKey: s.apiKey, dispatcher: agent });
  try {
    const summary = await runBatch({
      jobs: manifests[0]!.jobs,
      client,
      store,
      outDir: join(dir, "out"),
      cacheDir: join(dir, "cache"),
      concurrency: 1,
      httpOrigins: [new URL(s.baseUrl).origin],
    });
    const row = (await summaryRows(summary))[0]!;
    expect(row.state).toBe("Success");
    expect(row.file).not.toBeNull();
    // The result file's GET went through the same Agent as the calls to the service.
    const calls = agent.sent.filter((line) => line.includes("/v1/"));
    const downloads = agent.sent.filter((line) => !line.includes("/v1/"));
    expect(calls.length).toBeGreaterThan(0);
    expect(downloads).toHaveLength(1);
    expect(downloads[0]).toMatch(/^GET /);
  } finally {
    await client.close();
    await store.close();
    await agent.close();
  }
});
