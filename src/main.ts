import { createButler } from './app/index.js';
import { startupBanner } from './config/banner.js';
import { loadDotEnv } from './config/dot-env.js';
import { loadConfig } from './config/index.js';
import { ButlerError, ConfigError } from './core/contracts/errors.js';
import { createLogger } from './observability/logger.js';
import { platformConnectors } from './platform-connectors.js';
import { poolerNote } from './storage/database.js';

/** The service entry: config → logger → Butler → HTTP; stops gracefully on SIGTERM/SIGINT. */

const shutdownDeadlineMs = 15_000;

async function main(): Promise<void> {
  loadDotEnv();
  let loaded: ReturnType<typeof loadConfig>;
  try {
    loaded = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\nSee docs/configuration.md for every setting.\n`);
      process.exit(1);
    }
    throw error;
  }
  const { config, warnings } = loaded;
  const logger = createLogger({ level: config.logLevel, serviceName: config.serviceName });
  for (const warning of warnings) logger.warn(warning);

  const butler = await createButler(config, {
    logger,
    listen: true,
    connectors: platformConnectors(config, logger),
  });
  try {
    await butler.start();
  } catch (error) {
    // Problems only the MCP servers' tool lists reveal (a name clash, high-risk tools without approvers).
    if (!(error instanceof ConfigError)) throw error;
    await butler.stop(0).catch(() => {});
    process.stderr.write(`${error.message}\nSee docs/configuration.md for every setting.\n`);
    process.exit(1);
  }
  logger.info(
    startupBanner(butler.config, {
      port: butler.port,
      databaseLocation: butler.database.location,
      databaseNote: poolerNote(butler.database),
      tools: butler.toolNames(),
      mcp: butler.mcpStatus(),
      mcpWithoutCard: butler.mcpToolsWithoutCard(),
      demo: butler.demo,
    }),
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing running turns');
    butler
      .stop(shutdownDeadlineMs)
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  // A database that refused or did not answer: its variable, host and reason say enough.
  if (error instanceof ButlerError && error.code === 'database_unreachable') {
    process.stderr.write(`Butler could not open its database: ${error.message}\n`);
    process.exit(1);
  }
  // A failure Butler names (a platform that refused or could not be reached) says all there is to say; anything
  // else is a bug, and its stack trace is worth reading.
  const text =
    error instanceof ButlerError
      ? error.message
      : error instanceof Error
        ? (error.stack ?? error.message)
        : String(error);
  process.stderr.write(`Butler failed to start: ${text}\n`);
  process.exit(1);
});
