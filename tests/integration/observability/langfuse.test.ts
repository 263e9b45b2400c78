import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import { createLangfuseObserver } from '../../../src/observability/langfuse-observer.js';
import { startTestButler } from '../../helpers/butler-app.js';
import { type FakeLangfuse, startFakeLangfuse } from '../../helpers/fake-langfuse.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { start2026HttpServer } from '../../helpers/mcp-2026-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';
import { readEvents } from '../../helpers/sse-client.js';

let model: FakeModelServer;
let langfuse: FakeLangfuse;
beforeAll(async () => {
  model = await startFakeModelServer();
  langfuse = await startFakeLangfuse();
});
afterAll(async () => {
  await model.close();
  await langfuse.close();
});

const tracing = () => ({
  BUTLER_BASE_URL: model.baseUrl,
  BUTLER_MODEL: 'traced-model',
  LANGFUSE_ENABLED: 'true',
  LANGFUSE_PUBLIC_KEY: 'pk-lf-test',
  LANGFUSE_SECRET_KEY: 'sk-lf-test',
  LANGFUSE_BASE_URL: langfuse.baseUrl,
});

describe('Langfuse tracing', () => {
  it('sends one trace per turn with the generation, its usage and the tool span', async () => {
    const platform = new RecordingAdapter();
    const app = await startTestButler({ env: tracing(), adapters: [platform] });
    model.enqueue(
      { toolCalls: [{ id: 'call_recall', name: 'recall', arguments: '{"query":"deploys"}' }] },
      { text: 'Nothing remembered.', usage: { promptTokens: 321, completionTokens: 12 } },
    );
    const message = inboundMessage({ text: 'what do you remember?', user: { id: 'U-traced' } });
    await app.butler.service.accept(message);
    await app.settle();
    await app.close();

    const turn = langfuse.spans.find((span) => span.name === 'butler.turn');
    expect(turn?.attributes['session.id']).toBe('console:local:general:main');
    expect(turn?.attributes['user.id']).toBe('U-traced');
    const inTurn = langfuse.spans.filter((span) => span.traceId === turn?.traceId);
    const generations = inTurn.filter((span) => span.name === 'llm.chat');
    expect(generations).toHaveLength(2);
    const usage = JSON.parse(String(generations[1]?.attributes['langfuse.observation.usage_details']));
    expect(usage).toEqual({ input: 321, output: 12, total: 333 });
    expect(generations[1]?.attributes['langfuse.observation.model.name']).toBe('traced-model');
    expect(inTurn.some((span) => span.name === 'tool.recall')).toBe(true);
    expect(langfuse.authorizations[0]).toBe(
      `Basic ${Buffer.from('pk-lf-test:sk-lf-test').toString('base64')}`,
    );
    expect(JSON.stringify(langfuse.spans)).not.toContain('sk-lf-test');
  });

  it("names the conversation's channel profile in the trace, and uses its instructions", async () => {
    const platform = new RecordingAdapter();
    const app = await startTestButler({
      env: tracing(),
      adapters: [platform],
      config: {
        channels: [
          {
            name: 'general-desk',
            platform: 'console',
            id: 'general',
            instructions: 'You are the general desk.',
          },
        ],
      },
    });
    model.enqueue({ text: 'Desk here.' });
    await app.butler.service.accept(inboundMessage({ text: 'hello', user: { id: 'U-profiled' } }));
    await app.settle();
    await app.close();

    const system = model.requests.at(-1)?.messages.find((message) => message.role === 'system');
    expect(String(system?.content)).toContain('You are the general desk.');
    const turn = langfuse.spans.find(
      (span) => span.name === 'butler.turn' && span.attributes['user.id'] === 'U-profiled',
    );
    expect(turn?.attributes['langfuse.trace.metadata.profile']).toBe('general-desk');
    expect(turn?.attributes['langfuse.observation.metadata.profile']).toBe('general-desk');
  });

  it('keeps answering when Langfuse fails', async () => {
    langfuse.status = 500;
    const platform = new RecordingAdapter();
    const app = await startTestButler({ env: tracing(), adapters: [platform] });
    try {
      model.enqueue({ text: 'Still here.' });
      await app.butler.service.accept(inboundMessage({ text: 'hello' }));
      await app.settle();
      expect(platform.finalTexts()).toEqual(['Still here.']);
    } finally {
      await app.close();
      langfuse.status = 200;
    }
  });

  it('sends nothing when tracing is off', async () => {
    const before = langfuse.authorizations.length;
    const app = await startTestButler({
      env: { ...tracing(), LANGFUSE_ENABLED: 'false' },
      adapters: [new RecordingAdapter()],
    });
    model.enqueue({ text: 'untraced' });
    await app.butler.service.accept(inboundMessage({ text: 'hello' }));
    await app.settle();
    await app.close();
    expect(langfuse.authorizations.length).toBe(before);
  });

  it('nests a sub-agent run under the turn, with its own generations and tools beneath it', async () => {
    const observer = createLangfuseObserver({
      publicKey: 'pk-lf-test',
      secretKey: 'sk-lf-test',
      baseUrl: langfuse.baseUrl,
      serviceName: 'butler-test',
      logger: silentLogger,
      exportMode: 'immediate',
    });
    const at = (second: number) => new Date(Date.UTC(2025, 0, 1, 9, 0, second));
    const turn = observer.startTurn({
      turnId: 'turn-agent',
      conversationKey: 'console:local:general:agents',
      platform: 'console',
      userId: 'U-delegating',
      trigger: 'message',
    });
    const ops = turn.agent({
      agent: 'ops',
      delegateCallId: 'call_delegate',
      task: 'Check the last deploy.',
      resumed: false,
    });
    ops.generation({
      name: 'chat',
      model: 'ops-model',
      startTime: at(1),
      endTime: at(2),
      input: [{ role: 'user', content: 'Check the last deploy.' }],
      output: 'calling deploys',
      usage: { promptTokens: 40, completionTokens: 5 },
    });
    ops.toolCall({
      toolName: 'deploys',
      callId: 'call_deploys',
      risk: 'read',
      decision: 'auto',
      startTime: at(2),
      endTime: at(3),
      input: { limit: 1 },
      output: 'v42 at 08:55',
    });
    ops.end({
      status: 'failed',
      steps: 2,
      usage: { promptTokens: 40, completionTokens: 5 },
      output: 'Could not confirm the deploy.',
      error: 'step limit reached',
    });
    turn.end({ status: 'replied' });
    await observer.flush();
    await observer.shutdown();

    const root = langfuse.spans.find(
      (span) =>
        span.name === 'butler.turn' &&
        span.attributes['langfuse.observation.metadata.turnId'] === 'turn-agent',
    );
    expect(root).toBeDefined();
    const inTrace = langfuse.spans.filter((span) => span.traceId === root?.traceId);
    expect(inTrace.map((span) => span.name).sort()).toEqual([
      'agent.ops',
      'butler.turn',
      'llm.chat',
      'tool.deploys',
    ]);
    const agent = inTrace.find((span) => span.name === 'agent.ops');
    expect(agent?.attributes['langfuse.observation.type']).toBe('agent');
    expect(root?.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(agent?.parentSpanId).toBe(root?.spanId);
    expect(agent?.attributes['langfuse.observation.input']).toBe('Check the last deploy.');
    expect(agent?.attributes['langfuse.observation.metadata.delegateCallId']).toBe('call_delegate');
    expect(agent?.attributes['langfuse.observation.metadata.resumed']).toBe('false');
    expect(agent?.attributes['langfuse.observation.metadata.promptTokens']).toBe('40');
    expect(JSON.parse(String(agent?.attributes['langfuse.observation.output']))).toEqual({
      status: 'failed',
      steps: 2,
      output: 'Could not confirm the deploy.',
    });
    expect(agent?.attributes['langfuse.observation.level']).toBe('ERROR');
    expect(agent?.attributes['langfuse.observation.status_message']).toBe('step limit reached');
    const generation = inTrace.find((span) => span.name === 'llm.chat');
    expect(generation?.attributes['langfuse.observation.type']).toBe('generation');
    expect(generation?.parentSpanId).toBe(agent?.spanId);
    const tool = inTrace.find((span) => span.name === 'tool.deploys');
    expect(tool?.attributes['langfuse.observation.type']).toBe('tool');
    expect(tool?.parentSpanId).toBe(agent?.spanId);
  });

  it('traces a delegation through the running Butler: the agent span under the turn, its generation inside', async () => {
    const app = await startTestButler({
      env: tracing(),
      adapters: [new RecordingAdapter()],
      config: {
        agents: [
          { name: 'docs', description: 'Answers from the handbook.', instructions: 'Handbook expert.' },
        ],
      },
    });
    // One agent, so requests come in order: Butler delegates, docs answers, Butler replies.
    model.enqueue(
      {
        toolCalls: [{ id: 'call_docs', name: 'delegate', arguments: '{"agent":"docs","task":"Find RB-7."}' }],
      },
      { text: 'RB-7: roll back.', usage: { promptTokens: 30, completionTokens: 4 } },
      { text: 'RB-7 says roll back.' },
    );
    await app.butler.service.accept(
      inboundMessage({ text: 'what does RB-7 say?', user: { id: 'U-agents' } }),
    );
    await app.settle();
    await app.close();

    const turn = langfuse.spans.find(
      (span) => span.name === 'butler.turn' && span.attributes['user.id'] === 'U-agents',
    );
    const inTurn = langfuse.spans.filter((span) => span.traceId === turn?.traceId);
    const agent = inTurn.find((span) => span.name === 'agent.docs');
    expect(agent?.parentSpanId).toBe(turn?.spanId);
    expect(agent?.attributes['langfuse.observation.metadata.delegateCallId']).toBe('call_docs');
    const nested = inTurn.filter((span) => span.parentSpanId === agent?.spanId);
    expect(nested.map((span) => span.name)).toEqual(['llm.chat']);
    expect(
      inTurn.filter((span) => span.name === 'llm.chat' && span.parentSpanId === turn?.spanId),
    ).toHaveLength(2);
  });

  it("tags a scheduled run's trace and names its task", async () => {
    const app = await startTestButler({
      env: tracing(),
      adapters: [new RecordingAdapter()],
      config: { schedules: { checkEvery: '100ms' } },
    });
    model.enqueue({ text: 'Deploy checked.' });
    const { schedule } = await app.butler.schedules.create({
      creator: { platform: 'console', id: 'U-scheduler' },
      address: { platform: 'console', workspace: 'local', channel: 'ops', thread: 'main' },
      prompt: 'Check the deploy',
      at: 'PT1S',
      isDirect: false,
      source: 'chat',
    });
    const deadline = Date.now() + 10_000;
    while ((await app.butler.schedules.get(schedule.id))?.lastOutcome !== 'replied' && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    await app.close();

    const turn = langfuse.spans.find(
      (span) => span.name === 'butler.turn' && span.attributes['user.id'] === 'U-scheduler',
    );
    expect(turn?.attributes['langfuse.trace.tags']).toEqual(['scheduled']);
    expect(turn?.attributes['langfuse.trace.metadata.scheduleId']).toBe(schedule.id);
    expect(turn?.attributes['langfuse.observation.metadata.scheduleId']).toBe(schedule.id);
  });

  it("traces a server's question under its turn and its answer in the conversation's session, never the values", async () => {
    const shop = await start2026HttpServer();
    const key = 'traced-key-0123456789abcdef';
    const app = await startTestButler({
      env: { ...tracing(), KEY_TRACED: key },
      config: {
        mcpServers: [{ name: 'shop', url: shop.url, tools: { risk: { ship: 'low' } } }],
        // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
        api: { keys: [{ name: 'traced', key: '${KEY_TRACED}', scopes: ['chat'] }] },
      },
    });
    try {
      const api = (path: string, body: unknown) =>
        fetch(`${app.url}/api/v1${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      model.enqueue(
        { toolCalls: [{ id: 'call_traced_ship', name: 'shop__ship', arguments: '{"item":"mug"}' }] },
        { text: 'Shipped.' },
      );
      const asked = await readEvents(await api('/conversations/traced-1/messages', { text: 'ship a mug' }));
      const inputId = String(asked.at(-1)?.data.inputId);
      const content = { address: '1 Secret Lane', speed: 'express' };
      expect((await api(`/inputs/${inputId}`, { action: 'accept', content })).status).toBe(200);
      await app.settle();
    } finally {
      await app.close();
      await shop.close();
    }
    const requested = langfuse.spans.find((span) => span.name === 'input.requested');
    const turn = langfuse.spans.find(
      (span) => span.name === 'butler.turn' && span.traceId === requested?.traceId,
    );
    expect(turn?.attributes['session.id']).toBe('api:traced:traced-1:main');
    const answered = langfuse.spans.find((span) => span.name === 'input.answered');
    expect(answered?.attributes['session.id']).toBe('api:traced:traced-1:main');
    expect(answered?.attributes['langfuse.observation.metadata.action']).toBe('accept');
    // The question's spans say which fields were filled in, never what (the tool's own result is another matter).
    const questionSpans = langfuse.spans.filter((span) => span.name.startsWith('input.'));
    expect(JSON.stringify(questionSpans)).toContain('address');
    expect(JSON.stringify(questionSpans)).not.toContain('Secret Lane');
  });
});
