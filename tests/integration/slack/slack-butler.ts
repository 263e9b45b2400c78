import { sql } from 'drizzle-orm';
import { inboundEvents } from '../../../src/storage/schema.js';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import type { FakeModelServer } from '../../helpers/fake-model-server.js';
import type { FakeSlackApi } from '../../helpers/fake-slack-api.js';
import type { ToolServer } from '../../helpers/tool-server.js';
import { botUserId, signingSecret } from '../../unit/slack/payloads.js';

/** The whole Butler with Slack over HTTP, its Web API pointed at the fake, its model at the fake model. */
export async function startSlackButler(fake: FakeSlackApi, model: FakeModelServer, tools?: ToolServer) {
  const tool = (name: string, risk: string) => ({
    name,
    description: `${name.replace('_', ' ')} of a production service.`,
    risk,
    input: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
    http: { method: 'POST', url: `${tools?.url ?? 'http://127.0.0.1:9'}/${name}` },
  });
  const app = await startTestButler({
    env: {
      SLACK_BOT_TOKEN: 'xoxb-integration',
      SLACK_SIGNING_SECRET: signingSecret,
      SLACK_API_URL: fake.url,
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'test-model',
    },
    config: {
      approvers: { slack: ['U0APPROVER'] },
      tools: [tool('restart_service', 'high'), tool('scale_service', 'medium')],
    },
  });
  if (!app.butler.connectors.some((connector) => connector.adapter.platform === 'slack')) {
    await app.close();
    throw new Error(
      'Slack is not wired: src/platform-connectors.ts must add createSlackConnector when config.slack is set',
    );
  }
  return app;
}

let sequence = 0;

/** A fresh Slack `ts` near now (Butler skips messages older than maxMessageAgeMinutes). */
export function freshTs(): string {
  sequence += 1;
  return `${Math.floor(Date.now() / 1000)}.${String(100000 + sequence).padStart(6, '0')}`;
}

export async function storedEvents(app: TestButler): Promise<number> {
  const [row] = await app.butler.database.db
    .select({ count: sql<number>`count(*)::int` })
    .from(inboundEvents);
  return row?.count ?? 0;
}

/** The user turns the model saw, last message of each request. */
export function lastUserContent(model: FakeModelServer, index: number): string {
  const messages = model.requests[index]?.messages ?? [];
  const user = messages.filter((message) => message.role === 'user').at(-1);
  return String(user?.content ?? '');
}

export { botUserId };
