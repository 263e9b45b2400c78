import type { PlatformConnector } from './adapters/connector.js';
import type { ConnectorFactory } from './app.js';
import type { AppConfig } from './config/index.js';
import type { Logger } from './core/logger.js';

/** The platform integrations the config turns on. */
export function platformConnectors(config: AppConfig, logger: Logger): ConnectorFactory {
  return (_intake) => {
    const connectors: PlatformConnector[] = [];
    logger.debug({ slack: Boolean(config.slack), feishu: Boolean(config.feishu) }, 'platform connectors');
    return connectors;
  };
}
