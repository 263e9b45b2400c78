import { feishuWebhookPaths } from './feishu-apps.js';
import { policyLines } from './policy-banner.js';
import type { AppConfig } from './types.js';

/**
 * The start-up banner: what is on, what is off, and which variables turn each thing on.
 * One line per feature so a new user sees at a glance why Butler does (not) answer.
 */
export function startupBanner(
  config: AppConfig,
  facts: {
    port: number;
    databaseLocation: string;
    /** Said of a database behind a transaction pooler (storage/database.ts `poolerNote`). */
    databaseNote?: string | undefined;
    tools: string[];
    mcp: Record<string, string>;
    /** MCP tools that run without a card: an admin should see them before anyone asks for one. */
    mcpWithoutCard: string[];
    /** The demo model answers (`BUTLER_MODEL=demo`); `approver`: Butler made the terminal's approver. */
    demo?: { approver: boolean } | undefined;
  },
): string {
  const line = (name: string, state: string, hint?: string) =>
    `  ${name.padEnd(10)} ${state}${hint ? `  (${hint})` : ''}`;
  const lines = [
    `Butler is up on http://localhost:${facts.port} (GET /healthz, /readyz; admin console at /console)`,
  ];

  lines.push(
    config.databaseUrl
      ? line('database', `Postgres ${facts.databaseLocation}`, facts.databaseNote)
      : line('database', `embedded PGlite in ${facts.databaseLocation}`, 'set DATABASE_URL to use Postgres'),
  );
  lines.push(
    facts.demo
      ? line(
          'model',
          'DEMO: scripted replies, not an LLM',
          'set BUTLER_MODEL, BUTLER_BASE_URL, BUTLER_API_TOKEN for a real one',
        )
      : config.model
        ? line('model', `${config.model.model} at ${config.model.baseUrl ?? 'https://api.openai.com/v1'}`)
        : line(
            'model',
            'OFF: messages get a "no model configured" reply',
            'set BUTLER_MODEL, BUTLER_BASE_URL, BUTLER_API_TOKEN; or BUTLER_MODEL=demo for the scripted demo',
          ),
  );
  const compactionModel = config.compaction.model?.model ?? 'the Butler model';
  lines.push(
    config.compaction.enabled
      ? line(
          'compaction',
          `on above ${config.compaction.thresholdTokens} tokens, by ${compactionModel}`,
          config.compaction.model ? undefined : 'BUTLER_CONTEXT_COMPACTION_MODEL picks a cheaper model',
        )
      : line('compaction', 'OFF: full history is sent every turn', 'BUTLER_CONTEXT_COMPACTION_ENABLED=true'),
  );
  if (config.slack) {
    const mode = config.slack.appToken ? 'Socket Mode' : 'HTTP at POST /slack/events';
    // Installs over OAuth: the page an admin opens to add Butler to a workspace.
    const install =
      config.slack.install && config.publicUrl ? `, installs at ${config.publicUrl}/slack/install` : '';
    lines.push(line('slack', `on, ${mode}${install}`));
  } else {
    lines.push(
      line(
        'slack',
        'off',
        'set SLACK_BOT_TOKEN with SLACK_SIGNING_SECRET, or SLACK_APP_TOKEN for Socket Mode',
      ),
    );
  }
  if (config.feishu) {
    for (const app of config.feishu) {
      const mode =
        app.connection === 'websocket'
          ? 'long connection'
          : `webhook at POST ${feishuWebhookPaths(config.feishu, app)[0]}`;
      const kind = app.type === 'isv' ? 'store app' : 'self-built';
      lines.push(line('feishu', `on, ${app.appId} (${kind}), ${mode}, ${app.baseUrl}`));
    }
  } else {
    lines.push(line('feishu', 'off', 'set FEISHU_APP_ID, FEISHU_APP_SECRET and FEISHU_ENCRYPT_KEY'));
  }
  lines.push(
    config.apiKeys.length > 0
      ? line('api', `on at /api/v1, keys: ${config.apiKeys.map((key) => key.name).join(', ')}`)
      : line('api', 'off', 'add api.keys in butler.config.yaml'),
  );
  lines.push(
    config.langfuse.enabled
      ? line('langfuse', `on, ${config.langfuse.baseUrl}`)
      : line('langfuse', 'off', 'set LANGFUSE_ENABLED=true, LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY'),
  );
  lines.push(
    line(
      'tools',
      facts.tools.join(', ') || 'none',
      config.configPath ? `from ${config.configPath}` : 'add some in butler.config.yaml',
    ),
  );
  for (const [server, state] of Object.entries(facts.mcp)) lines.push(line(`mcp ${server}`, state));
  if (Object.keys(facts.mcp).length > 0)
    lines.push(
      line(
        'no card',
        facts.mcpWithoutCard.length > 0
          ? `these MCP tools run without approval: ${facts.mcpWithoutCard.join(', ')}`
          : 'every MCP tool asks for approval',
        facts.mcpWithoutCard.length > 0 ? 'raise one with mcpServers[].tools.risk' : undefined,
      ),
    );
  for (const agent of config.agents) {
    const tools =
      agent.tools.length === 0
        ? 'no tools'
        : `${agent.tools.length} tool pattern${agent.tools.length === 1 ? '' : 's'}`;
    const model = agent.endpoint ? `model ${agent.endpoint.model}` : "Butler's model";
    lines.push(line(`agent ${agent.name}`, `${tools}, ${model}`));
  }
  if (config.routing.enabled) {
    lines.push(line('routing', `on (${config.routing.endpoint?.model ?? 'the Butler model'})`));
  } else if (config.agents.length > 0) {
    lines.push(line('routing', 'off: Butler delegates when it decides to', 'routing.enabled: true'));
  }
  const policy = policyLines(config, facts, line);
  lines.push(...policy.lines, ...policy.warnings.map((warning) => line('WARNING', warning)));
  return lines.join('\n');
}
