// Decides which request fails and how, from a seeded PRNG, so a test that saw a failure sees the
// same one again on the next run. Each request draws a fixed set of numbers in a fixed order
// (latency, outcome, then before/after for a drop), which keeps the sequence reproducible for a
// given order of requests.
import type { FaultKind } from "./counters.js";
import type { SandboxFaults } from "./options.js";

/** mulberry32: tiny, fast, and good enough to spread faults; not for anything secret. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What happens to one API request. */
export type ApiFault =
  | { readonly kind: "none" }
  | { readonly kind: "429" | "503"; readonly retryAfterSeconds: number }
  | { readonly kind: "500-after-effect" }
  | { readonly kind: "drop-before-effect" }
  | { readonly kind: "drop-after-effect" };

export interface Decision<F> {
  readonly latencyMs: number;
  readonly fault: F;
}

const NONE: ApiFault = { kind: "none" };

export class FaultPlan {
  private readonly faults: SandboxFaults;
  private readonly random: () => number;

  constructor(faults: SandboxFaults) {
    this.faults = faults;
    this.random = mulberry32(faults.seed ?? 1);
  }

  private applies(route: string): boolean {
    return this.faults.routes === undefined || this.faults.routes.includes(route);
  }

  private latency(): number {
    const latency = this.faults.latencyMs;
    if (latency === undefined) return 0;
    if (typeof latency === "number") return latency;
    const [min, max] = latency;
    return min + this.random() * (max - min);
  }

  /** For an authenticated request on a known API route, e.g. `"POST /v1/generations"`. */
  decideApi(route: string): Decision<ApiFault> {
    if (!this.applies(route)) return { latencyMs: 0, fault: NONE };
    const latencyMs = this.latency();
    const f = this.faults;
    const rates: [FaultKind | "drop", number][] = [
      ["429", f.rate429 ?? 0],
      ["503", f.rate503 ?? 0],
      ["drop", f.rateDrop ?? 0],
      ["500-after-effect", f.rate500AfterEffect ?? 0],
    ];
    if (rates.every(([, rate]) => rate === 0)) return { latencyMs, fault: NONE };
    let draw = this.random();
    for (const [kind, rate] of rates) {
      if (draw < rate) {
        const retryAfterSeconds = f.retryAfterSeconds ?? 1;
        if (kind === "429" || kind === "503") return { latencyMs, fault: { kind, retryAfterSeconds } };
        if (kind === "drop") {
          const after = this.random() < 0.5;
          return { latencyMs, fault: { kind: after ? "drop-after-effect" : "drop-before-effect" } };
        }
        return { latencyMs, fault: { kind: "500-after-effect" } };
      }
      draw -= rate;
    }
    return { latencyMs, fault: NONE };
  }

  /** For a file download: added latency and whether to cut the body short. */
  decideDownload(route: string): Decision<boolean> {
    if (!this.applies(route)) return { latencyMs: 0, fault: false };
    const latencyMs = this.latency();
    const rate = this.faults.rateTruncateDownload ?? 0;
    return { latencyMs, fault: rate > 0 && this.random() < rate };
  }
}
