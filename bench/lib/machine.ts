import { cpus, loadavg, totalmem } from 'node:os';
import { postgresVersion } from './database.js';
import { megabytes } from './stats.js';

/** The facts a reader needs to weigh the figures: what ran them, where and when. */
export interface Machine {
  cores: number;
  cpuModel: string;
  memory: string;
  node: string;
  postgres: string;
  date: string;
  loadAverage: string;
}

export async function describeMachine(): Promise<Machine> {
  const processors = cpus();
  return {
    cores: processors.length,
    cpuModel: processors[0]?.model.trim() ?? 'unknown',
    memory: megabytes(totalmem()),
    node: process.version,
    postgres: await postgresVersion(),
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    loadAverage: loadavg()
      .map((value) => value.toFixed(2))
      .join(' / '),
  };
}
