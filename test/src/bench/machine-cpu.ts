/**
 * CPU of processes the bench does not start, read from /proc (Linux): the PostgreSQL, NATS and
 * Redis servers the services use, and a peer's processes. The services' own CPU is what the
 * issue's ratio counts, but on a two-core machine these servers take as much again, and every
 * millisecond they spend is one a delivery may wait for; the report shows both.
 *
 * They are the machine's servers, not the bench's: anything else they serve meanwhile (another
 * test run) is counted too, so the figures mean something only on an otherwise quiet machine.
 */
import { readFileSync, readdirSync } from 'node:fs';

/** Processes counted together, by their command line. */
export interface ProcessGroup {
  name: string;
  pattern: RegExp;
}

/** The servers every service talks to (PostgreSQL's postmaster, backends and helpers alike). */
export const INFRASTRUCTURE: readonly ProcessGroup[] = [
  { name: 'postgres', pattern: /^postgres(:| |$)|\/bin\/postgres( |$)/ },
  { name: 'nats', pattern: /nats-server/ },
  { name: 'redis', pattern: /redis-server/ },
];

export interface ProcessCpu {
  pid: number;
  cmd: string;
  /** utime + stime, seconds. */
  cpu: number;
}

/** Running processes whose command line `keep` accepts, with their CPU so far (one pass over /proc). */
function scanProcesses(keep: (cmd: string) => boolean): ProcessCpu[] {
  const out: ProcessCpu[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      if (!keep(cmd)) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the parenthesised command name (which may hold spaces); utime and stime are the 14th and 15th.
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.push({ pid: Number(pid), cmd, cpu: (Number(f[11]) + Number(f[12])) / 100 });
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

/** Running processes whose command line matches `pattern`, with their CPU so far. */
export function processesMatching(pattern: RegExp): ProcessCpu[] {
  return scanProcesses((cmd) => pattern.test(cmd));
}

/** Each group's processes at one moment: pid → CPU seconds so far. */
export type GroupReading = Record<string, ReadonlyMap<number, number>>;

/** Every group's processes, read in one pass over /proc (a process goes to the first group it matches). */
export function readGroups(groups: readonly ProcessGroup[]): GroupReading {
  const reading = new Map(groups.map((g) => [g.name, new Map<number, number>()]));
  for (const p of scanProcesses((cmd) => groups.some((g) => g.pattern.test(cmd)))) {
    const group = groups.find((g) => g.pattern.test(p.cmd)) as ProcessGroup;
    reading.get(group.name)?.set(p.pid, p.cpu);
  }
  return Object.fromEntries(reading);
}

/**
 * CPU seconds each group used between two readings. A process that started meanwhile (a new
 * PostgreSQL backend) counts whole; one that ended before the second reading is not seen
 * there, and what it used after the first is lost (short-lived ones are rare in a run).
 */
export function groupCpuBetween(before: GroupReading, after: GroupReading): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, now] of Object.entries(after)) {
    const then = before[name] ?? new Map<number, number>();
    let used = 0;
    for (const [pid, cpu] of now) used += Math.max(0, cpu - (then.get(pid) ?? 0));
    out[name] = used;
  }
  return out;
}

/** Starts measuring the groups; the function returned gives each group's CPU seconds since. */
export function groupCpuMeter(groups: readonly ProcessGroup[]): () => Record<string, number> {
  const before = readGroups(groups);
  return () => groupCpuBetween(before, readGroups(groups));
}
