// Where a process id names one process: one boot of one kernel, seen from one PID namespace. Two
// machines given one host name, or two containers on one machine (each its reel as pid 1), share
// a host name and may share pids; whether a pid runs can only be asked where it was given. So a
// process is judged gone by its pid only from its own pid space, never from its host name.
import { readFileSync, readlinkSync } from "node:fs";

let thisBoot: string | undefined;
let thisSpace: string | undefined;

/** This boot's id (Linux), or "" where the system does not say; read once per process. */
export function bootId(): string {
  if (thisBoot === undefined) {
    try {
      thisBoot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    } catch {
      thisBoot = "";
    }
  }
  return thisBoot;
}

/**
 * This process's pid space: its boot's id and its PID namespace (`<boot id>/pid:[<inode>]`), or ""
 * where either is unknown (not Linux, no /proc): then no process elsewhere is judged by its pid.
 */
export function pidSpace(): string {
  if (thisSpace === undefined) {
    let namespace = "";
    try {
      namespace = readlinkSync("/proc/self/ns/pid");
    } catch {
      // no /proc, or no namespaces: unknown
    }
    const boot = bootId();
    thisSpace = boot !== "" && namespace !== "" ? `${boot}/${namespace}` : "";
  }
  return thisSpace;
}
