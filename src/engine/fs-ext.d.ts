// The part of fs-ext that out-dir.ts uses (the package ships no types): flock(2) on an open file.
declare module "fs-ext" {
  /** "ex" exclusive, "sh" shared, "un" unlock; "nb" suffix: fail with EAGAIN instead of waiting. */
  export function flockSync(fd: number, flags: "ex" | "exnb" | "sh" | "shnb" | "un"): void;
}
