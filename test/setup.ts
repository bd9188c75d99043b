// Run before each test file, in the file's own scope: the hooks of the helpers that keep a list
// across a file's tests. A helper module registering its hook when imported would register it for
// the first file of a worker alone, as test files share their imported modules (vitest.config.ts:
// isolate false). Registered before the file's own hooks, so they run after them (vitest runs the
// afterEach hooks last-registered first): a command stops before its temp folder is removed.
import { afterEach } from "vitest";
import { undoDisks } from "./helpers/disks.js";
import { removeTempDirs } from "./helpers/temp-dir.js";

afterEach(async () => {
  undoDisks();
  await removeTempDirs();
});
