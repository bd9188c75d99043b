// What a runner of the fleet is told of, whichever call found it: that it was taken over (its lease
// lost: it must stop), and the takeovers that found something (the engine's notes say them).
import { LeaseLostError } from "../../errors/state.js";
import type { TakeOver } from "../job-store.js";

export class FleetNews {
  private readonly leaseListeners: ((error: LeaseLostError) => void)[] = [];
  private lost: LeaseLostError | undefined;
  private readonly takeOverListeners = new Set<(found: TakeOver) => void>();
  /** Takeovers that found something before any listener: told to the first. */
  private unsaid: TakeOver[] = [];

  /** Tells the listeners, once, that this runner was taken over. */
  leaseLost(error: LeaseLostError): void {
    if (this.lost) return;
    this.lost = error;
    for (const listener of this.leaseListeners.splice(0)) listener(error);
  }

  onLeaseLost(listener: (error: LeaseLostError) => void): void {
    if (this.lost) listener(this.lost);
    else this.leaseListeners.push(listener);
  }

  /** `work`, whose LeaseLostError is also told to the listeners. */
  async fenced<T>(work: Promise<T>): Promise<T> {
    try {
      return await work;
    } catch (error) {
      if (error instanceof LeaseLostError) this.leaseLost(error);
      throw error;
    }
  }

  /** A takeover is said by whoever listens, whichever call made it; one that found nothing is not. */
  tellTakeOver(found: TakeOver): void {
    if (found.lost.length === 0 && found.uncertain === 0 && found.uploads === 0) return;
    if (this.takeOverListeners.size === 0) this.unsaid.push(found);
    for (const listener of this.takeOverListeners) listener(found);
  }

  /** Returns the unsubscribe. */
  onTakeOver(listener: (found: TakeOver) => void): () => void {
    this.takeOverListeners.add(listener);
    for (const found of this.unsaid.splice(0)) listener(found);
    return () => this.takeOverListeners.delete(listener);
  }
}
