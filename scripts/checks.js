// npm test's checks before the test suite: lint, format, typecheck and build, run at once (each is
// one process of a few seconds of CPU; one after another they took twice as long on two cores).
// Each one's output is shown whole once it ends, failed or not, so outputs never interleave.
// Outside CI, eslint, prettier and the typecheck keep a cache in .cache/ (eslint's and prettier's
// keyed on each file's content, the config and the tool's version; tsc's build info), so a second
// run checks again only what changed; CI (CI set, a clean clone) runs them without one, over every
// file.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const bin = (pkg, path) => fileURLToPath(new URL(`../node_modules/${pkg}/${path}`, import.meta.url));
const cached = !process.env.CI;

const checks = [
  {
    name: "lint",
    args: [
      bin("eslint", "bin/eslint.js"),
      ".",
      ...(cached ? ["--cache", "--cache-strategy", "content", "--cache-location", ".cache/eslint"] : []),
    ],
  },
  {
    name: "format",
    args: [
      bin("prettier", "bin/prettier.cjs"),
      "--check",
      ".",
      ...(cached ? ["--cache", "--cache-strategy", "content", "--cache-location", ".cache/prettier"] : []),
    ],
  },
  {
    name: "typecheck",
    args: [
      bin("typescript", "bin/tsc"),
      "-p",
      "tsconfig.json",
      "--noEmit",
      ...(cached ? ["--incremental", "--tsBuildInfoFile", ".cache/typecheck.tsbuildinfo"] : []),
    ],
  },
  // Never incremental: the test suite's dist/ freshness check counts on every output rewritten.
  { name: "build", args: [bin("typescript", "bin/tsc"), "-p", "tsconfig.build.json"] },
];

function run({ name, args }) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: fileURLToPath(new URL("../", import.meta.url)),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("error", (error) => (output += `${error.message}\n`));
    child.on("close", (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const ok = code === 0;
      process.stdout.write(`${ok ? "ok  " : "FAIL"} ${name} (${seconds} s)\n`);
      if (output.trim()) process.stdout.write(indent(output));
      resolve(ok);
    });
  });
}

const indent = (text) =>
  text
    .trimEnd()
    .split("\n")
    .map((line) => `     ${line}`)
    .join("\n") + "\n";

const results = await Promise.all(checks.map(run));
if (results.includes(false)) {
  process.stdout.write(`npm test: ${results.filter((ok) => !ok).length} check(s) failed, see above\n`);
  process.exitCode = 1;
}
