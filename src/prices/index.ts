// The user's prices: the price list, where reel finds it, and what a plan spends.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { shownPath } from "../user-path.js";
import { PRICES_FILE_NAME, type PriceTable, readPriceTable } from "./price-table.js";

export { PRICES_FILE_NAME, type PriceTable, readPriceTable, videoCredits } from "./price-table.js";
export { PriceFileError } from "../errors/usage.js";
export { type ManifestSpend, type PlanSpend, planSpend, type SpendSplit } from "./plan-spend.js";

/**
 * The price list: the file given (--prices, else REEL_PRICES), else `prices.yaml` in the folder that
 * anchors the manifests (the project's, or the state's), else none.
 */
export function findPriceTable(where: {
  readonly given: string | undefined;
  readonly anchorDir: string;
  readonly cwd: string;
}): PriceTable | undefined {
  const path =
    where.given !== undefined ? resolve(where.cwd, where.given) : join(where.anchorDir, PRICES_FILE_NAME);
  if (where.given === undefined && !existsSync(path)) return undefined;
  return readPriceTable(path, shownPath(where.cwd, path));
}
