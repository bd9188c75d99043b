import { defineConfig } from "vitest/config";
import { LongestFirst } from "./test/sequencer.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Starts (as root) or finds the PostgreSQL server of the store tests: see test/global-setup.ts.
    globalSetup: ["test/global-setup.ts"],
    setupFiles: ["test/setup.ts"],
    // The longest files first, also in a clean clone with no durations cached: see test/sequencer.ts.
    sequence: { sequencer: LongestFirst },
    // A worker's test files share the modules they import (src/ and the helpers are imported once
    // per worker, not once per file: the imports were a third of a file's time for most files).
    // No test mocks a module or stubs a global; the helpers' hooks are registered per file by
    // test/setup.ts or by the use*() call at the top of a file.
    isolate: false,
    // Test files mostly wait (on the sandbox's clock, child processes, PostgreSQL), so more files
    // run at once than there are cores: vitest's default (cores - 1) ran them one at a time on a
    // 2-core machine, 8 minutes for what takes under 4 this way. Each file owns its ports (0),
    // folders and databases, so files never share anything but the machine. REEL_TEST_WORKERS
    // overrides it (1 to run them one by one).
    maxWorkers: Number(process.env.REEL_TEST_WORKERS) || 3,
    // Tests run real servers, real child processes and real files: generous limits, as CI machines
    // are slower and noisier than a laptop. Timing is measured by the benchmarks, not asserted here.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // expect.poll waits for an event (a page updated live, a file written): 1 s by default, short on
    // a busy machine running three test files at once.
    expect: { poll: { timeout: 10_000 } },
  },
});
