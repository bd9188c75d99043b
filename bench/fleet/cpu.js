// CPU read from /proc: the runners' (children that exited), PostgreSQL's backends', each thread's
// of a live runner, and the whole machine's.
import { readdirSync, readFileSync } from "node:fs";
import { CLOCK_TICKS } from "./settings.js";

/** utime + stime of a process, in seconds; undefined if it is gone. */
function cpuOf(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** CPU seconds of this process's children that have exited (cutime + cstime). */
export function childrenCpu() {
  const { user, system } = childrenCpuParts();
  return user + system;
}

/** The same, user and system apart. */
export function childrenCpuParts() {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
  return { user: Number(fields[13]) / CLOCK_TICKS, system: Number(fields[14]) / CLOCK_TICKS };
}

/**
 * The CPU of the PostgreSQL backends serving database `name` (their title: "postgres: 15/main: user
 * name host(port) state"): each one's last reading, sampled every 100 ms so that backends that end
 * before the round does are counted (all but their last 100 ms).
 */
export function backendCpu(name) {
  const needle = ` ${name} `;
  const last = new Map();
  const notPostgres = new Set();
  const scan = () => {
    for (const entry of readdirSync("/proc")) {
      if (notPostgres.has(entry) || !/^\d+$/.test(entry)) continue;
      if (!last.has(entry)) {
        let title;
        try {
          title = readFileSync(`/proc/${entry}/cmdline`, "latin1");
        } catch {
          continue;
        }
        // A backend just forked still has the server's command line: looked at again next time.
        if (!title.includes("postgres")) notPostgres.add(entry);
        if (!title.startsWith("postgres: ") || !title.includes(needle)) continue;
      }
      const cpu = cpuOf(entry);
      if (cpu !== undefined) last.set(entry, cpu);
    }
  };
  scan();
  const timer = setInterval(scan, 100);
  return {
    /** Stops sampling; the CPU seconds counted, and how many backends. */
    stop() {
      scan();
      clearInterval(timer);
      const each = [...last.values()].sort((a, b) => b - a);
      return { seconds: each.reduce((a, b) => a + b, 0), backends: last.size, each };
    },
  };
}

/**
 * The whole machine's CPU (/proc/stat), sampled every 50 ms: `busyBetween(t0, t1)` is the share of
 * all cores busy between two Date.now() times (the samples nearest inside them).
 */
export function machineCpu() {
  const samples = [];
  const sample = () => {
    const [, ...fields] = readFileSync("/proc/stat", "utf8").split("\n", 1)[0].trim().split(/\s+/);
    const ticks = fields.map(Number);
    const idle = ticks[3] + ticks[4]; // idle + iowait
    samples.push({ at: Date.now(), idle, total: ticks.reduce((a, b) => a + b, 0) });
  };
  sample();
  const timer = setInterval(sample, 50);
  return {
    stop() {
      clearInterval(timer);
      sample();
    },
    busyBetween(t0, t1) {
      const inside = samples.filter((x) => x.at >= t0 && x.at <= t1);
      if (inside.length < 2) return Number.NaN;
      const a = inside[0];
      const b = inside[inside.length - 1];
      return 1 - (b.idle - a.idle) / (b.total - a.total);
    },
  };
}

/**
 * The CPU of the runners' threads, sampled every 100 ms while they live: the main thread's (the
 * JavaScript, its system calls) apart from the others' (V8's compiler and GC helpers, libuv's pool).
 * The last moments of each process are missed: shares, beside the exact total from /proc/self/stat.
 */
export function threadCpu(intervalMs = 100) {
  const pids = new Set();
  const last = new Map(); // "pid/tid" -> { main, seconds }
  const scan = () => {
    for (const pid of pids) {
      let tids;
      try {
        tids = readdirSync(`/proc/${pid}/task`);
      } catch {
        continue;
      }
      for (const tid of tids) {
        const seconds = cpuOf(`${pid}/task/${tid}`);
        if (seconds !== undefined) last.set(`${pid}/${tid}`, { main: tid === String(pid), seconds });
      }
    }
  };
  const timer = setInterval(scan, intervalMs);
  return {
    add: (pid) => pid !== undefined && pids.add(pid),
    /** Stops sampling: the CPU seconds counted of the main threads and of the others. */
    totals() {
      clearInterval(timer);
      let main = 0;
      let others = 0;
      for (const t of last.values()) {
        if (t.main) main += t.seconds;
        else others += t.seconds;
      }
      return { main, others };
    },
    /** Stops sampling: the share of the main threads in the CPU counted. */
    stop() {
      clearInterval(timer);
      let main = 0;
      let all = 0;
      for (const t of last.values()) {
        all += t.seconds;
        if (t.main) main += t.seconds;
      }
      return all > 0 ? main / all : Number.NaN;
    },
  };
}
