// Folders whose disk misbehaves, made for real: a read-only folder and a small full disk. As root
// (tests often run as root in containers) chmod does not stop writes, so a real mount is used:
// each helper says why it cannot make its disk here, and the test is skipped with that reason.
import { execFileSync } from "node:child_process";
import { chmodSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const undo: (() => void)[] = [];

/** Puts back every disk made here (unmounts, modes); test/setup.ts calls it after each test. */
export function undoDisks(): void {
  for (const step of undo.splice(0).reverse()) {
    try {
      step();
    } catch {
      // the next steps still run
    }
  }
}

const isRoot = (): boolean => process.getuid?.() === 0;

function run(cmd: string, args: string[]): boolean {
  try {
    execFileSync(cmd, args, { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Whether a file can be written into `dir` right now. */
function writable(dir: string): boolean {
  const probe = join(dir, ".write-test");
  try {
    writeFileSync(probe, "x");
    rmSync(probe);
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes the existing, empty folder `dir` refuse writes until the end of the test. Not root: chmod
 * 0555 (EACCES). Root: a read-only tmpfs mounted on it (EROFS), else `chattr +i` (EPERM; ext4/xfs).
 * Returns undefined, or why it cannot be done here.
 */
export function makeReadOnly(dir: string): string | undefined {
  if (!isRoot()) {
    chmodSync(dir, 0o555);
    undo.push(() => chmodSync(dir, 0o755));
  } else if (run("mount", ["-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", dir])) {
    undo.push(() => execFileSync("umount", [dir]));
  } else if (run("chattr", ["+i", dir])) {
    undo.push(() => execFileSync("chattr", ["-i", dir]));
  } else {
    return "running as root without the right to mount or chattr: no way to make a read-only folder";
  }
  return writable(dir) ? "the folder is still writable here" : undefined;
}

/**
 * Mounts a tmpfs of `size` (e.g. "64k") on the existing, empty folder `dir`, unmounted after the
 * test: a real disk that fills up. Returns `grow(size)` (frees space: a bigger disk, its files kept),
 * or why it cannot be done here.
 */
export function mountSmallDisk(dir: string, size: string): ((size: string) => void) | string {
  if (!isRoot()) return "a small disk needs a tmpfs mount, which needs root";
  if (!run("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir])) {
    return "mount -t tmpfs was refused (no CAP_SYS_ADMIN)";
  }
  undo.push(() => execFileSync("umount", ["-l", dir]));
  return (bigger) => execFileSync("mount", ["-o", `remount,size=${bigger}`, dir]);
}
