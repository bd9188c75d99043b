// The `yaml` package's document model (every node with its position), loaded on first use. A
// manifest is read by js-yaml (manifest/parse/parse-yaml.ts); the model is needed only for a
// project file, a price table, or something in a manifest to point at, and loading it costs a run
// about 30 ms of CPU at every start (every runner of a fleet pays it). Required, not imported, so
// that the functions of this module stay synchronous, as the package's are.
import { createRequire } from "node:module";
import type * as Yaml from "yaml";

const require = createRequire(import.meta.url);
let loaded: typeof Yaml | undefined;

/** The package itself (the same module an `import` of it gives). */
export function yamlModel(): typeof Yaml {
  return (loaded ??= require("yaml") as typeof Yaml);
}

export const isAlias = ((node: unknown) => yamlModel().isAlias(node)) as typeof Yaml.isAlias;
export const isMap = ((node: unknown) => yamlModel().isMap(node)) as typeof Yaml.isMap;
export const isPair = ((node: unknown) => yamlModel().isPair(node)) as typeof Yaml.isPair;
export const isScalar = ((node: unknown) => yamlModel().isScalar(node)) as typeof Yaml.isScalar;
export const isSeq = ((node: unknown) => yamlModel().isSeq(node)) as typeof Yaml.isSeq;
export const parseDocument = ((...args: Parameters<typeof Yaml.parseDocument>) =>
  yamlModel().parseDocument(...args)) as typeof Yaml.parseDocument;
export const visit: (...args: Parameters<typeof Yaml.visit>) => void = (...args) =>
  yamlModel().visit(...args);
export const newLineCounter = (): Yaml.LineCounter => new (yamlModel().LineCounter)();
