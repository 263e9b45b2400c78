import type { PlatformConnector } from './adapters/connector.js';
import { createFeishuConnector } from './adapters/feishu/index.js';
import { createSlackConnector } from './adapters/slack/index.js';
import type { ConnectorFactory } from './app.js';
import type { AppConfig } from './config/index.js';
import type { Logger } from './core/logger.js';

/** The platform integrations the config turns on. */
export function platformConnectors(config: AppConfig, logger: Logger): ConnectorFactory {
  return (intake) => {
    const connectors: PlatformConnector[] = [];
    if (config.slack) {
      connectors.push(
        createSlackConnector({
          config: config.slack,
          file: config.file,
          intake,
          logger: logger.child({ platform: 'slack' }),
        }),
      );
    }
    if (config.feishu) {
      connectors.push(
        createFeishuConnector({
          config: config.feishu,
          file: config.file,
          intake,
          logger: logger.child({ platform: 'feishu' }),
        }),
      );
    }
    return connectors;
  };
}
