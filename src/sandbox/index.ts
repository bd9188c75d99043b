// The public face of the emulator: what the CLI, the tests and the benchmarks import. Everything
// else in this folder is an implementation detail that may move.
export type { FaultKind, TaskTimes } from "./counters.js";
export { SandboxCounters } from "./counters.js";
export { mulberry32 } from "./faults.js";
export { BIG_FIRST_ID } from "./ids.js";
export { makeApiKey, type SandboxFaults, type SandboxOptions, type SandboxRequest } from "./options.js";
export { frameSize, RESULT_VIDEO_PATH, resultVideoBytes } from "./result-video.js";
export { readVideoFacts, type VideoFacts } from "./mp4-boxes.js";
export { API_ROUTES, type ApiRoute, FILE_ROUTE } from "./routes.js";
export { type Sandbox, startSandbox } from "./server.js";
export { speechSeconds } from "./speech.js";
