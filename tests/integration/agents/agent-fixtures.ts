import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { ConversationAddress } from '../../../src/core/contracts/events.js';
import { startTestButler, type TestButler, type TestButlerOptions } from '../../helpers/butler-app.js';
import {
  type FakeModelServer,
  type RecordedRequest,
  type ScriptedReply,
  startFakeModelServer,
} from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';

/**
 * Two specialists over the scripted fake model and the HTTP tool server: "ops" (service tools) and "docs"
 * (no tools). Each model request is told apart by its system prompt, since parallel runs arrive in any order.
 */

export const ana = { id: 'ana', name: 'Ana' };
export const olga = { id: 'olga', name: 'Olga' };

export const opsInstructions = 'You operate production services. Check health before acting.';
export const docsInstructions = 'You answer from the team handbook.';

const systemText = (request: RecordedRequest) => String(request.messages[0]?.content ?? '');

/** Requests made by the named sub-agent. */
export const byAgent = (name: string) => (request: RecordedRequest) =>
  systemText(request).includes(`You are the "${name}" agent`);

/** Requests of the routing step (structured output). */
export const isRouting = (request: RecordedRequest) => request.body.response_format !== undefined;

/** Requests of Butler's own loop. */
export const isButler = (request: RecordedRequest) =>
  !isRouting(request) && !systemText(request).includes('" agent. Butler, the team');

export interface AgentExtras {
  /** Overrides for the ops agent's entry. */
  agents?: Record<string, unknown>;
  /** More config-file entries (routing, approvalTtlMinutes). */
  config?: Record<string, unknown>;
}

export function agentOptions(
  model: FakeModelServer,
  tools: ToolServer,
  platform: RecordingAdapter,
  extra: AgentExtras = {},
): TestButlerOptions {
  const tool = (name: string, risk: string, method: string) => ({
    name,
    description: `${name.replace('_', ' ')} of a service.`,
    risk,
    input: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
    http: { method, url: `${tools.url}/${name}` },
  });
  return {
    env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model' },
    config: {
      approvers: { console: ['olga'] },
      tools: [
        tool('service_status', 'low', 'GET'),
        tool('scale_service', 'medium', 'POST'),
        tool('restart_service', 'high', 'POST'),
      ],
      agents: [
        {
          name: 'ops',
          description: 'Checks and restarts production services.',
          instructions: opsInstructions,
          tools: ['service_status', 'restart_*'],
          maxSteps: 4,
          ...extra.agents,
        },
        { name: 'docs', description: 'Answers from the handbook.', instructions: docsInstructions },
      ],
      ...extra.config,
    },
    adapters: [platform],
  };
}

export interface AgentSuite {
  model: FakeModelServer;
  tools: ToolServer;
  platform: RecordingAdapter;
  app: TestButler;
}

/** Registers a test file's hooks: the fakes and a running Butler with both agents, recordings cleared per test. */
export function useAgentButler(extra: AgentExtras = {}): AgentSuite {
  const suite = {} as AgentSuite;
  beforeAll(async () => {
    suite.model = await startFakeModelServer();
    suite.tools = await startToolServer();
    suite.platform = new RecordingAdapter();
    suite.app = await startTestButler(agentOptions(suite.model, suite.tools, suite.platform, extra));
  });
  afterAll(async () => {
    await suite.app?.close();
    await suite.model?.close();
    await suite.tools?.close();
  });
  beforeEach(() => {
    suite.model.reset();
    suite.tools.requests.length = 0;
  });
  return suite;
}

let thread = 0;

export function newAddress(): ConversationAddress {
  thread += 1;
  return { platform: 'console', workspace: 'local', channel: 'ops', thread: `agents-${thread}` };
}

/** Butler's model step that delegates: one `delegate` call per [agent, task]. */
export function delegating(...tasks: Array<[string, string]>): ScriptedReply {
  return {
    toolCalls: tasks.map(([agent, task], index) => ({
      id: `delegate_${thread}_${index}`,
      name: 'delegate',
      arguments: JSON.stringify({ agent, task, context: 'Asked in #ops.' }),
    })),
  };
}

/** Sends `text` from Ana and waits until Butler has finished with it. */
export async function ask(app: TestButler, address: ConversationAddress, text: string) {
  await app.butler.service.accept(inboundMessage({ text, address, user: ana, isDirect: false }));
  await app.settle();
}

/** The tool results Butler's model was given, by call id, in its `index`-th request. */
export function toolResults(model: FakeModelServer, index: number): Record<string, string> {
  const request = model.requests.filter(isButler)[index];
  return Object.fromEntries(
    (request?.messages ?? [])
      .filter((message) => message.role === 'tool')
      .map((message) => [String(message.tool_call_id), String(message.content)]),
  );
}
