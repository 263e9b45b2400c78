import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createPostgresDatabase,
  databaseEnv,
  dropPostgresDatabase,
  seedPgliteDirectory,
  testDatabaseUrl,
} from './database.js';
import { entryArguments, tsxEnvironment } from './entry-points.js';

/**
 * `npm start`'s entry point (`src/main.ts`) as a child process, for tests that kill it mid-work and start it
 * again on the same database: a fresh Postgres database when TEST_DATABASE_URL is set, else a PGlite
 * directory. Configured only by environment and a config file, as a user would.
 */

export interface ServiceProcess {
  url: string;
  /** Everything the process wrote to stdout and stderr (JSON log lines). */
  output(): string;
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export interface ServiceHome {
  /** The Postgres database the service runs on (undefined on PGlite, which only the service may open). */
  databaseUrl: string | undefined;
  /** Starts the service (again) on this home's database; resolves once it serves HTTP. */
  start(env: Record<string, string>): Promise<ServiceProcess>;
  /** Drops the database and the directory. */
  remove(): Promise<void>;
}

class PortTaken extends Error {}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

function run(
  env: Record<string, string>,
  cwd: string,
): { child: ChildProcessWithoutNullStreams; output: () => string } {
  const child = spawn(process.execPath, entryArguments('src/main.ts'), {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...tsxEnvironment, ...env },
    cwd,
    stdio: 'pipe',
  });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += String(chunk);
  });
  child.stderr.on('data', (chunk) => {
    output += String(chunk);
  });
  return { child, output: () => output };
}

export async function createServiceHome(config: Record<string, unknown>): Promise<ServiceHome> {
  const directory = mkdtempSync(join(tmpdir(), 'butler-service-'));
  const configPath = join(directory, 'butler.config.json');
  writeFileSync(configPath, JSON.stringify(config));
  const databaseUrl = testDatabaseUrl ? await createPostgresDatabase() : undefined;
  if (!databaseUrl) seedPgliteDirectory(join(directory, 'data'));
  const running = new Set<ChildProcessWithoutNullStreams>();

  async function startOn(port: number, env: Record<string, string>): Promise<ServiceProcess> {
    const { child, output } = run(
      {
        PORT: String(port),
        LOG_LEVEL: 'info',
        BUTLER_CONFIG: configPath,
        ...(databaseUrl ? databaseEnv(databaseUrl) : { BUTLER_DATA_DIR: join(directory, 'data') }),
        ...env,
      },
      directory,
    );
    running.add(child);
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    const deadline = Date.now() + 30_000;
    while (!output().includes('Butler is up')) {
      if (child.exitCode !== null && output().includes('EADDRINUSE')) {
        running.delete(child);
        throw new PortTaken();
      }
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`the service did not start:\n${output()}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const kill = async (signal: NodeJS.Signals) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
      running.delete(child);
    };
    return {
      url: `http://127.0.0.1:${port}`,
      output,
      kill: () => kill('SIGKILL'),
      stop: () => kill('SIGTERM'),
    };
  }

  return {
    databaseUrl,
    async start(env) {
      // A port found free can be taken by another test's socket before the child listens on it (seconds later,
      // on a loaded machine): then the child exits with EADDRINUSE, and another port is tried.
      for (let attempt = 1; ; attempt++) {
        try {
          return await startOn(await freePort(), env);
        } catch (error) {
          if (attempt >= 3 || !(error instanceof PortTaken)) throw error;
        }
      }
    },
    async remove() {
      for (const child of running) child.kill('SIGKILL');
      if (databaseUrl) await dropPostgresDatabase(databaseUrl);
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
