import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Starts (as root) or finds the PostgreSQL server of the store tests: see test/global-setup.ts.
    globalSetup: ["test/global-setup.ts"],
    // Tests run real servers, real child processes and real files: generous limits, as CI machines
    // are slower and noisier than a laptop. Timing is measured by the benchmarks, not asserted here.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
