// The store's calls timed for the metrics, without touching the stores: a proxy that times each
// method call (a promise until it settles, a plain call as it returns) and passes everything else
// through. Methods run on the store itself, never on the proxy: the stores keep private fields.
import { performance } from "node:perf_hooks";

/** `store`, its method calls told to `observe(call)` with their duration in seconds. */
export function timedStore<S extends object>(
  store: S,
  observe: (call: string) => (seconds: number) => void,
): S {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== "function" || typeof prop !== "string" || prop === "constructor") return value;
      let timed = wrapped.get(prop);
      if (timed === undefined) {
        const done = observe(prop);
        const method = value as (...args: unknown[]) => unknown;
        timed = function (this: unknown, ...args: unknown[]): unknown {
          const started = performance.now();
          const result = method.apply(target, args);
          if (result instanceof Promise) {
            const settled = (): void => done((performance.now() - started) / 1000);
            result.then(settled, settled);
          } else done((performance.now() - started) / 1000);
          return result;
        };
        wrapped.set(prop, timed);
      }
      return timed;
    },
  });
}
