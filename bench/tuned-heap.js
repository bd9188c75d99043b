// Imported first by a bench: V8 tuned as `reel run` tunes it (src/cli/heap.ts), before the bench's
// other modules load. Tuned after them, the young generation has grown on the way (to 16 MB against
// the CLI's 2), and the bench's peak RSS is no longer the CLI's.
import { tuneHeapForBatches } from "../dist/cli/heap.js";

tuneHeapForBatches();
