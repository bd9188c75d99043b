export * from "./classify.js";
export * from "./client.js";
export * from "./service-client.js";
export * from "../errors/service.js";
export { makeDispatcher, type TransportOptions } from "./transport.js";
export { DEFAULT_RETRY, type RetryOptions } from "./retry-policy.js";
