import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time spent by processes, read from /proc (Linux): user + system time in milliseconds. CPU per
 * unit of work is steadier than throughput on a shared machine, since it does not count time spent
 * waiting for the other core. Elsewhere the readings are NaN and the tables say n/a.
 */

/** /proc reports times in USER_HZ ticks, fixed at 100 per second on Linux. */
const millisecondsPerTick = 10;

function cpuOfStat(stat: string): number {
  // The command name (field 2) may hold spaces; fields after it are fixed: utime and stime are 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * millisecondsPerTick;
}

/** CPU time of one process (all its threads), or NaN when it cannot be read. */
export function processCpuMilliseconds(pid: number): number {
  try {
    return cpuOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return Number.NaN;
  }
}

/**
 * CPU time of every process named `name` that is running now (e.g. all of a local Postgres server's
 * backends and helpers). Backends that exit between two readings take their time with them, so this
 * suits servers whose connections are pooled, as Butler's are.
 */
export function processesCpuMilliseconds(name: string): number {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return Number.NaN;
  }
  let total = 0;
  for (const pid of entries) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== name) continue;
      total += cpuOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      // The process ended while we looked.
    }
  }
  return total;
}
