import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';

/**
 * CPU seconds used by this process (process.cpuUsage) and by other processes
 * and their descendants (utime + stime from /proc/<pid>/stat, Linux only), so
 * a rate can be given per CPU-second as well as per wall-clock second: on a
 * shared machine the wall clock counts time other work took, CPU time far less.
 * A process that exits between two readings takes its time with it; a new one
 * counts from zero (function environments come and go).
 */
export interface CpuMeter {
  /** Whether other processes are counted (false: this process alone). */
  readonly includesChildren: boolean;
  /** CPU seconds so far: this process plus every reachable process's. */
  read(): number;
}

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    const out = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    const n = Number(out.stdout?.trim());
    ticksPerSecond = Number.isFinite(n) && n > 0 ? n : 100;
  }
  return ticksPerSecond;
}

/** utime + stime of one process in clock ticks, or undefined when it is gone or /proc is absent. */
export function parseProcStatTicks(stat: string): number | undefined {
  // The command name (field 2) may hold spaces and parentheses: fields are counted after its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return Number.isFinite(utime) && Number.isFinite(stime) ? utime + stime : undefined;
}

function readTicks(pid: number): number | undefined {
  try {
    return parseProcStatTicks(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** The pid and all its descendants (a launcher's JVM, a guardian's child), from /proc/<pid>/task/<tid>/children. */
function withDescendants(pid: number, seen = new Set<number>()): Set<number> {
  if (seen.has(pid)) return seen;
  seen.add(pid);
  let tasks: string[] = [];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return seen;
  }
  for (const tid of tasks) {
    try {
      for (const child of fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/))
        if (child !== '') withDescendants(Number(child), seen);
    } catch {
      // The task ended while being read.
    }
  }
  return seen;
}

export function cpuMeter(pids: () => readonly number[]): CpuMeter {
  const own = () => {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1e6;
  };
  const reachable = fs.existsSync('/proc/self/stat') && pids().length > 0;
  return {
    includesChildren: reachable,
    read: () => {
      if (!reachable) return own();
      const all = new Set<number>();
      for (const pid of pids()) for (const p of withDescendants(pid)) if (p !== process.pid) all.add(p);
      let ticks = 0;
      for (const pid of all) ticks += readTicks(pid) ?? 0;
      return own() + ticks / clockTicks();
    },
  };
}

/** Things per CPU-second; 0 when no CPU time was measured. */
export function perCpuSecond(count: number, cpuSeconds: number | undefined): number {
  return cpuSeconds === undefined || cpuSeconds <= 0 ? 0 : count / cpuSeconds;
}
