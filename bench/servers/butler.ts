import { createButler } from '../../src/app/index.js';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { platformConnectors } from '../../src/platform-connectors.js';

/**
 * Butler as src/main.ts starts it, with Slack's rate tiers off (BENCH_SLACK_TIERS=off): the benchmarks of
 * Butler's own work (ingest, end to end, streaming, …) send hundreds of mentions a second into one workspace,
 * which Slack's tiers (20 streamed replies a minute) would turn into a measure of Slack. Their fake Slack does
 * not enforce the tiers either; the rate-tiers benchmark runs src/main.ts against one that does.
 */

const { config } = loadConfig();
const logger = createLogger({ level: config.logLevel, serviceName: config.serviceName });
const slack = config.slack;
const others = platformConnectors({ ...config, slack: undefined }, logger);
// Loaded only when Slack is configured, as platform-connectors.ts does (the memory benchmark counts it).
const { createSlackConnector } = slack ? await import('../../src/adapters/slack/index.js') : {};
const butler = await createButler(config, {
  logger,
  listen: true,
  connectors: async (intake) => [
    ...(slack && createSlackConnector
      ? [
          createSlackConnector({
            config: slack,
            file: config.file,
            intake,
            logger: logger.child({ platform: 'slack' }),
            tuning: { rateTiers: process.env.BENCH_SLACK_TIERS !== 'off' },
          }),
        ]
      : []),
    ...(await others(intake)),
  ],
});
await butler.start();

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    butler
      .stop(15_000)
      .then(() => process.exit(0))
      .catch(() => process.exit(1));
  });
}
