#!/usr/bin/env node
// The entry point: the CLI returns an exit code and it is handed to the OS once the output is written.
// cli/main.ts exits too, at once, on a second Ctrl-C (an error a command throws is an exit code).
import { statSync } from "node:fs";

// dist/bundle/ (`npm run build`: rolldown.config.js) is the same code in a few files, quicker to
// load; used only when made from the current dist/ (tsc alone rewrites dist/cli/main.js after it).
const built = (path) => statSync(new URL(path, import.meta.url), { throwIfNoEntry: false })?.mtimeMs ?? -1;
const entry =
  built("../dist/bundle/main.js") >= built("../dist/cli/main.js")
    ? "../dist/bundle/main.js"
    : "../dist/cli/main.js";
const { main } = await import(entry);

const code = await main(process.argv.slice(2));
// Output still queued for a slow reader (a pipe holds 64 KiB) is lost on exit: wait until it has
// been handed over, or the reader is gone.
await Promise.all(
  [process.stdout, process.stderr].map((stream) => new Promise((resolve) => stream.write("", resolve))),
);
process.exit(code);
