// Lint rules. ESLint + typescript-eslint rather than Biome: Biome's platform binaries are optional
// dependencies that this project's npm registry does not all serve, which breaks `npm ci`.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "dist/",
      "node_modules/",
      "out/",
      ".reel/",
      "test-artifacts/",
      "coverage/",
      "src/manifest/validate/validator.generated.ts",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: "readonly",
        console: "readonly",
        Buffer: "readonly",
        URL: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
        AbortController: "readonly",
        AbortSignal: "readonly",
        TextEncoder: "readonly",
        TextDecoder: "readonly",
        structuredClone: "readonly",
        queueMicrotask: "readonly",
        performance: "readonly",
        global: "readonly",
        NodeJS: "readonly",
        document: "readonly",
        window: "readonly",
        IntersectionObserver: "readonly",
        HTMLElement: "readonly",
        HTMLVideoElement: "readonly",
        HTMLInputElement: "readonly",
        HTMLSelectElement: "readonly",
      },
    },
    rules: {
      // Nothing prints but the CLI's entry point (see the last block).
      "no-console": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-non-null-assertion": "off",
    },
  },
  {
    files: ["src/cli/main.ts", "bin/**", "bench/**", "scripts/**", "test/**"],
    rules: { "no-console": "off" },
  },
  {
    // Only the CLI's entry point exits or writes to the process's streams: a command returns its exit
    // code and prints through the io it is handed (CliIO), library code prints nothing. So the output
    // is flushed before the process exits, and tests run commands in-process.
    files: ["src/**"],
    ignores: ["src/cli/main.ts"],
    rules: {
      "no-restricted-properties": [
        "error",
        {
          object: "process",
          property: "exit",
          message: "Only the CLI entry point exits the process: return an exit code.",
        },
      ],
      "no-restricted-syntax": [
        "error",
        {
          selector:
            "CallExpression[callee.object.object.name='process'][callee.object.property.name=/^(stdout|stderr)$/][callee.property.name='write']",
          message:
            "Only the CLI entry point writes to the process's streams: print through the command's io.",
        },
      ],
    },
  },
  {
    // What a runner's start loads (test/cli/start-up.test.ts): undici's parts from undici-parts.ts,
    // not its index (all of undici); pg from state/pg/driver.ts, which keeps it from loading Node's
    // own fetch. Their types may be imported anywhere.
    files: ["src/**/*.ts"],
    ignores: ["src/undici-parts.ts", "src/undici-files.d.ts", "src/state/pg/driver.ts"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          paths: [
            {
              name: "undici",
              message:
                "Import Agent and request from src/undici-parts.ts: undici's index loads all of undici.",
              allowTypeImports: true,
            },
            {
              name: "pg",
              message:
                "Import Pool and Client from src/state/pg/driver.ts (it keeps pg from loading Node's fetch).",
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
);
