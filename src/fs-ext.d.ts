// The part of fs-ext that reel uses (the package ships no types): flock(2) on an open file, for
// the state file's lock (state/sqlite/db/lock.ts) and the output folder's (output/out-dir.ts).
declare module "fs-ext" {
  /** flock(2) on `fd`; throws an Error with `code` (EAGAIN / EWOULDBLOCK when held, with "nb"). */
  export function flockSync(fd: number, flags: "sh" | "ex" | "shnb" | "exnb" | "un"): void;
}
