#!/usr/bin/env node
// The only place that exits the process: the CLI returns an exit code and we hand it to the OS.
import { main } from "../dist/cli/main.js";

const code = await main(process.argv.slice(2));
process.exit(code);
