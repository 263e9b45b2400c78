import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestButler } from '../../helpers/butler-app.js';
import { type FakeLangfuse, startFakeLangfuse } from '../../helpers/fake-langfuse.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';

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
});
