// The browser the report tests drive: Debian's `chromium` (or REEL_CHROMIUM), through playwright-core.
import { existsSync } from "node:fs";

export const CHROMIUM = process.env.REEL_CHROMIUM ?? "/usr/bin/chromium";
export const HAS_CHROMIUM = existsSync(CHROMIUM);

export const LAUNCH_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
