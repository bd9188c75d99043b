export * from "./client.js";
export * from "./errors.js";
export { type CallKind, DEFAULT_RETRY, type RetryOptions } from "./retry-policy.js";
