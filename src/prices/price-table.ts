// The user's price list: the service publishes none, so what a video costs is the user's
// to say, in `prices.yaml` beside the project's reel.yaml (or the state reel found above the
// manifests), or the file named by --prices / REEL_PRICES:
//
//   version: 1
//   video:                       # credits per second of video, per model ...
//     actor-2: 1.5
//     avatar-h1: { 540p: 1, 720p: 2 }   # ... or per model and resolution
//   speech: 0.2                  # credits per speech made (optional)
//
// Every problem is said at file:line:col, as a manifest's are; a model or resolution the service does
// not know is one (a typo would price a model at nothing).
import { readFileSync } from "node:fs";
import type { Node } from "yaml";
import { isMap, isScalar, newLineCounter, parseDocument } from "../yaml-model.js";
import { didYouMean } from "../edit-distance.js";
import { PriceFileError, UsageError } from "../errors/usage.js";
import { MODELS, type Model, RESOLUTIONS, type Resolution } from "../service-contract/api-types.js";

export const PRICES_FILE_NAME = "prices.yaml";

/** Credits per second of video of one model: one price, or one per resolution. */
export type ModelPrice = number | ReadonlyMap<Resolution, number>;

export interface PriceTable {
  /** The file, as messages name it. */
  readonly file: string;
  readonly video: ReadonlyMap<Model, ModelPrice>;
  /** Credits per speech made; undefined when not priced. */
  readonly speech: number | undefined;
}

/** Reads and checks the price list at `path` (absolute); `shown` names it in messages. */
export function readPriceTable(path: string, shown: string): PriceTable {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read the price list ${shown}: ${(error as Error).message}`);
  }
  const lines = newLineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  const problems: { line: number; col: number; message: string }[] = [];
  const refuse = (): never => {
    problems.sort((a, b) => a.line - b.line || a.col - b.col);
    throw new PriceFileError(problems.map((p) => `${shown}:${p.line}:${p.col}: ${p.message}`));
  };
  const at = (node: Node | null | undefined, message: string): void => {
    const { line, col } = node?.range ? lines.linePos(node.range[0]) : { line: 1, col: 1 };
    problems.push({ line, col, message });
  };
  for (const error of doc.errors) {
    const { line, col } = lines.linePos(error.pos[0]);
    problems.push({ line, col, message: error.message.split("\n")[0]! });
  }
  if (problems.length > 0) refuse();

  const video = new Map<Model, ModelPrice>();
  let speech: number | undefined;
  let version = false;
  const price = (node: unknown, what: string): number | undefined => {
    const value = isScalar(node) ? node.value : undefined;
    if (typeof value === "number" && Number.isFinite(value) && value >= 0) return value;
    at(node as Node, `${what} takes a number of credits from 0 up, not ${JSON.stringify(value ?? null)}`);
    return undefined;
  };
  if (!isMap(doc.contents)) {
    at(doc.contents, "a price list is a mapping: version, video, speech (see README, Prices)");
    return refuse();
  }
  for (const pair of doc.contents.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : "";
    if (key === "version") {
      version = isScalar(pair.value) && pair.value.value === 1;
      if (!version) at(pair.value as Node, "version takes 1");
    } else if (key === "speech") speech = price(pair.value, "speech");
    else if (key === "video") {
      if (!isMap(pair.value)) {
        at(pair.value as Node, "video takes a mapping of models to credits per second, e.g. actor-2: 1.5");
        continue;
      }
      for (const entry of pair.value.items) {
        const model = isScalar(entry.key) ? String(entry.key.value) : "";
        if (!(MODELS as readonly string[]).includes(model)) {
          const near = didYouMean(model, MODELS);
          at(
            entry.key as Node,
            near
              ? `unknown model ${JSON.stringify(model)}; did you mean ${JSON.stringify(near)}? (the models are ${MODELS.join(", ")})`
              : `unknown model ${JSON.stringify(model)}: the models are ${MODELS.join(", ")}`,
          );
          continue;
        }
        if (isMap(entry.value)) {
          const byResolution = new Map<Resolution, number>();
          for (const item of entry.value.items) {
            const resolution = isScalar(item.key) ? String(item.key.value) : "";
            if (!(RESOLUTIONS as readonly string[]).includes(resolution)) {
              at(
                item.key as Node,
                `unknown resolution ${JSON.stringify(resolution)}: ${RESOLUTIONS.join(", ")}`,
              );
              continue;
            }
            const value = price(item.value, `${model} at ${resolution}`);
            if (value !== undefined) byResolution.set(resolution as Resolution, value);
          }
          video.set(model as Model, byResolution);
        } else {
          const value = price(entry.value, model);
          if (value !== undefined) video.set(model as Model, value);
        }
      }
    } else
      at(pair.key as Node, `unknown field ${JSON.stringify(key)}: a price list takes version, video, speech`);
  }
  if (!version && !doc.contents.items.some((pair) => isScalar(pair.key) && pair.key.value === "version"))
    problems.push({ line: 1, col: 1, message: "missing `version: 1` (the price list's format version)" });
  if (problems.length > 0) refuse();
  return { file: shown, video, speech };
}

/**
 * What `seconds` of video of `model` at `resolution` cost, or undefined when the list prices it not
 * (no price for the model, or none for that resolution, or a job that sends none while the model is
 * priced per resolution: the service's default is not known).
 */
export function videoCredits(
  table: PriceTable,
  model: Model,
  resolution: Resolution | undefined,
  seconds: number,
): number | undefined {
  const price = table.video.get(model);
  if (price === undefined) return undefined;
  if (typeof price === "number") return price * seconds;
  const perSecond = resolution === undefined ? undefined : price.get(resolution);
  return perSecond === undefined ? undefined : perSecond * seconds;
}
