// The part of fs-ext that lock.ts uses (the package ships no types).
declare module "fs-ext" {
  /** flock(2) on `fd`; throws an Error with `code` (EAGAIN / EWOULDBLOCK when held, with "nb"). */
  export function flockSync(fd: number, flags: "sh" | "ex" | "shnb" | "exnb" | "un"): void;
}
