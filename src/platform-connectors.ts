import type { PlatformConnector } from './adapters/connector.js';
import type { ConnectorFactory, PlatformHooksOf } from './app/index.js';
import type { AppConfig } from './config/index.js';
import { SecretBox } from './core/connections/secret-box.js';
import type { Logger } from './core/contracts/logger.js';

/**
 * The platform integrations the config turns on. Each platform's SDK is loaded only when that
 * platform is configured: the Lark SDK alone adds about 110 MB of resident memory.
 */
export function platformConnectors(config: AppConfig, logger: Logger): ConnectorFactory {
  return async (intake, hooksOf: PlatformHooksOf = () => ({})) => {
    const connectors: PlatformConnector[] = [];
    if (config.slack) {
      const { createSlackConnector } = await import('./adapters/slack/index.js');
      const hooks = hooksOf('slack');
      const { secretKeys, publicUrl } = config;
      // The config refuses installs without a secret key and a public URL.
      const installs =
        config.slack.install && secretKeys && publicUrl && hooks.installations
          ? { stored: { repository: hooks.installations, secrets: new SecretBox(secretKeys) }, publicUrl }
          : undefined;
      connectors.push(
        createSlackConnector({
          config: config.slack,
          file: config.file,
          intake,
          logger: logger.child({ platform: 'slack' }),
          hooks,
          ...(installs ? { installs } : {}),
          search: config.search.slack,
        }),
      );
    }
    if (config.feishu) {
      const { createFeishuConnector, servesManyTenants } = await import('./adapters/feishu/index.js');
      const hooks = hooksOf('feishu');
      const { secretKeys } = config;
      // The config refuses a store app without a secret key.
      const storage =
        servesManyTenants(config.feishu) && hooks.feishu
          ? { ...hooks.feishu, box: secretKeys ? new SecretBox(secretKeys) : undefined }
          : undefined;
      connectors.push(
        createFeishuConnector({
          apps: config.feishu,
          file: config.file,
          intake,
          logger: logger.child({ platform: 'feishu' }),
          hooks,
          storage,
          searchApp: config.search.feishu?.appId,
        }),
      );
    }
    return connectors;
  };
}
