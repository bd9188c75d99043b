// undici parses HTTP with llhttp, compiled to WebAssembly at a process's first request. V8 compiles
// a module twice: at once with its baseline compiler (Liftoff), then again, optimized (TurboFan), on
// a background thread: 73 to 78 ms of CPU for llhttp, paid again by every runner of a fleet at its
// start, for a parser that spends microseconds on a response (a video's bytes are counted, not
// parsed). Liftoff's code alone serves reel as well: measured in docs/benchmarks.md ("undici's
// parser left at its first compilation"). Read when a module is compiled, so set before any request.
import { setFlagsFromString } from "node:v8";

export function keepWasmAtBaseline(): void {
  setFlagsFromString("--liftoff-only");
}
