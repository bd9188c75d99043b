// Sandboxes started by a test file's tests, all closed after each test.
import { afterEach } from "vitest";
import { type Sandbox, type SandboxOptions, startSandbox } from "../../src/sandbox/index.js";

/**
 * Call at the top of a test file: returns `sandbox(options)`, which starts a fast sandbox (time
 * scale 0.01, 5 ms of pre-processing, 8 slots unless `options` say otherwise) closed after the test.
 */
export function useSandboxes(): (options?: SandboxOptions) => Promise<Sandbox> {
  const started: Sandbox[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((s) => s.close()));
  });
  return async (options = {}) => {
    const s = await startSandbox({ timeScale: 0.01, preProcessingMs: 5, slots: 8, ...options });
    started.push(s);
    return s;
  };
}
