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
      "src/manifest/validator.generated.ts",
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
      // Library code never prints: the CLI decides what the user sees (and only it exits).
      "no-console": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-non-null-assertion": "off",
    },
  },
  {
    files: ["src/cli/**", "bin/**", "bench/**", "scripts/**", "test/**"],
    rules: { "no-console": "off" },
  },
  {
    files: ["src/**"],
    ignores: ["src/cli/**"],
    rules: {
      "no-restricted-properties": [
        "error",
        { object: "process", property: "exit", message: "Only the CLI entry point exits the process." },
      ],
    },
  },
);
