import { sql } from 'drizzle-orm';
import { inboundEvents } from '../../src/storage/schema.js';
import { startTestButler, type TestButler, type TestButlerOptions } from './butler-app.js';
import type { FakeModelServer } from './fake-model-server.js';
import type { ToolServer } from './tool-server.js';

/** What the Slack and Feishu integration harnesses share; each platform's env and fixtures stay in its own file. */

const connectorNames = { slack: 'Slack', feishu: 'Feishu' } as const;
export type ChatPlatform = keyof typeof connectorNames;

/** The tools every platform suite configures: a high-risk and a medium-risk call to the tool endpoint. */
export function serviceTools(tools: ToolServer | undefined) {
  const tool = (name: string, risk: string) => ({
    name,
    description: `${name.replace('_', ' ')} of a production service.`,
    risk,
    input: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
    // Port 9 (discard) when a test has no tool endpoint: a call fails rather than reaching anything.
    http: { method: 'POST', url: `${tools?.url ?? 'http://127.0.0.1:9'}/${name}` },
  });
  return [tool('restart_service', 'high'), tool('scale_service', 'medium')];
}

/**
 * Starts the whole Butler and checks that the platform's connector was built from the environment, so a
 * missing wiring fails with the fix rather than with requests answered 404.
 */
export async function startPlatformButler(
  platform: ChatPlatform,
  options: TestButlerOptions,
): Promise<TestButler> {
  const app = await startTestButler(options);
  if (!app.butler.connectors.some((connector) => connector.adapter.platform === platform)) {
    await app.close();
    const name = connectorNames[platform];
    throw new Error(
      `${name} is not wired: src/platform-connectors.ts must add create${name}Connector when config.${platform} is set`,
    );
  }
  return app;
}

/** How many events the inbox holds (messages and approval resumes). */
export async function storedEvents(app: TestButler): Promise<number> {
  const [row] = await app.butler.database.db
    .select({ count: sql<number>`count(*)::int` })
    .from(inboundEvents);
  return row?.count ?? 0;
}

/** The last user message of a model request, as the model saw it. */
export function lastUserContent(model: FakeModelServer, index: number): string {
  const messages = model.requests[index]?.messages ?? [];
  return String(messages.filter((message) => message.role === 'user').at(-1)?.content ?? '');
}
