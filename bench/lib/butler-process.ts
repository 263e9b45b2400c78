import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { feishuSecrets, slackSecrets } from './platform-requests.js';
import { type ChildService, freePort, startNodeProcess, waitForHttp } from './processes.js';

/**
 * Butler as users run it: `node --import tsx src/main.ts`, configured by environment variables and a
 * config file, in a process of its own. Platforms and model point at the benchmark's fakes.
 */

export type ButlerDatabase = { kind: 'postgres'; url: string } | { kind: 'pglite' };

export interface ButlerProcessOptions {
  name: string;
  database: ButlerDatabase;
  slackApiUrl?: string;
  feishuBaseUrl?: string;
  /** The OpenAI-compatible endpoint; unset = no model (Butler says so in chat). */
  modelUrl?: string;
  /** The config file's content (JSON). */
  config?: Record<string, unknown>;
  env?: Record<string, string>;
  /** Extra node flags, e.g. --expose-gc or --cpu-prof. */
  nodeFlags?: string[];
  /** Extra modules to preload after tsx (e.g. the memory probe). */
  preload?: string[];
  ipc?: boolean;
  /** Another checkout of Butler to run (e.g. an earlier commit, for before/after figures). */
  checkout?: string;
  /**
   * Pace Slack calls to the documented rate tiers, as src/main.ts does. Off by default here: the benchmarks
   * measure Butler's own work against a fake Slack that does not enforce them (bench/servers/butler.ts).
   * Earlier checkouts predate the pacing and always run their src/main.ts.
   */
  slackRateTiers?: boolean;
}

export interface ButlerProcess {
  service: ChildService;
  url: string;
  stop(): Promise<void>;
}

/** The log level Butler runs at in benchmarks: its default, logs thrown away by the OS. */
export const benchLogLevel = process.env.BENCH_LOG_LEVEL || 'info';

export async function startButlerProcess(options: ButlerProcessOptions): Promise<ButlerProcess> {
  const directory = mkdtempSync(join(tmpdir(), 'butler-bench-'));
  const configPath = join(directory, 'butler.config.json');
  writeFileSync(configPath, JSON.stringify(options.config ?? {}));
  const port = await freePort();
  const env: Record<string, string> = {
    PORT: String(port),
    LOG_LEVEL: benchLogLevel,
    BUTLER_CONFIG: configPath,
    ...(options.database.kind === 'postgres'
      ? { DATABASE_URL: options.database.url }
      : { BUTLER_DATA_DIR: join(directory, 'data') }),
    ...(options.modelUrl ? { BUTLER_BASE_URL: options.modelUrl, BUTLER_MODEL: 'bench-model' } : {}),
    ...(options.slackApiUrl
      ? {
          SLACK_BOT_TOKEN: slackSecrets.botToken,
          SLACK_SIGNING_SECRET: slackSecrets.signingSecret,
          SLACK_API_URL: options.slackApiUrl,
        }
      : {}),
    ...(options.feishuBaseUrl
      ? {
          FEISHU_APP_ID: feishuSecrets.appId,
          FEISHU_APP_SECRET: feishuSecrets.appSecret,
          FEISHU_ENCRYPT_KEY: feishuSecrets.encryptKey,
          FEISHU_VERIFICATION_TOKEN: feishuSecrets.verificationToken,
          FEISHU_DOMAIN: options.feishuBaseUrl,
        }
      : {}),
    ...options.env,
  };
  const preload = (options.preload ?? []).flatMap((module) => ['--import', module]);
  const entry = options.checkout || options.slackRateTiers ? 'src/main.ts' : 'bench/servers/butler.ts';
  const service = startNodeProcess({
    name: options.name,
    nodeArguments: [...(options.nodeFlags ?? []), '--import', 'tsx', ...preload, entry],
    env: { ...env, BENCH_SLACK_TIERS: 'off' },
    ipc: options.ipc ?? false,
    ...(options.checkout ? { cwd: options.checkout } : {}),
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(service, `${url}/readyz`);
  } catch (error) {
    await service.stop(2_000);
    rmSync(directory, { recursive: true, force: true });
    throw error;
  }
  return {
    service,
    url,
    async stop() {
      await service.stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** A bench server script (bench/servers/*.ts) in its own process; resolves once it answers `readyPath`. */
export async function startBenchServer(options: {
  name: string;
  script: string;
  arguments?: string[];
  env: Record<string, string>;
  readyPath: string;
}): Promise<{ service: ChildService; url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const service = startNodeProcess({
    name: options.name,
    nodeArguments: ['--import', 'tsx', options.script, ...(options.arguments ?? [])],
    env: { PORT: String(port), ...options.env },
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(service, `${url}${options.readyPath}`);
  } catch (error) {
    await service.stop(2_000);
    throw error;
  }
  return { service, url, stop: () => service.stop(5_000) };
}
