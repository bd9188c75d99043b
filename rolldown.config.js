// The CLI's own code (dist/, as tsc wrote it) bundled into a few files of dist/bundle/, which
// bin/reel.js runs when it is as new as dist/: resolving, reading and compiling some 300 modules one
// by one was about 120 ms of CPU at every start, paid again by every runner of a fleet. Packages stay
// outside (each loads as it does from dist/: native drivers, pino's worker files, lazy requires).
// dist/bundle/ is as deep as dist/cli/, so paths made from import.meta.url (the sandbox's clips,
// `reel init`'s templates) resolve alike. Each command's code stays a chunk of its own, loaded when
// the command runs, named after its module.
import { isAbsolute } from "node:path";

export default {
  input: { main: "dist/cli/main.js" },
  platform: "node",
  // A bare specifier (a package, node:...) stays an import; a path of dist/ is bundled.
  external: (id) => !id.startsWith(".") && !isAbsolute(id) && !id.startsWith("\0"),
  output: { dir: "dist/bundle", format: "esm", chunkFileNames: "[name].js", cleanDir: true },
};
