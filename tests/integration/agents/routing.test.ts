import { describe, expect, it } from 'vitest';
import { databaseKind } from '../../helpers/database.js';
import {
  ask,
  byAgent,
  delegating,
  isButler,
  isRouting,
  newAddress,
  toolResults,
  useAgentButler,
} from './agent-fixtures.js';

/**
 * The pre-turn routing decision: structured output from a cheap model, validated; a confident delegation
 * goes straight to the agent, anything invalid or slow leaves the turn as it was. And the deadlines of
 * routing and of a sub-agent's run.
 */

const suite = useAgentButler({
  // Deadlines a loaded machine's successful calls stay well inside, which the hanging ones still outlast.
  agents: { timeoutMs: 3_000 },
  config: { routing: { enabled: true, model: 'router-model', timeoutMs: 2_000, minConfidence: 0.7 } },
});

const decision = (fields: Record<string, unknown>) => ({
  text: JSON.stringify({ intent: 'direct_answer', agent: null, confidence: 0.9, reasoning: 'r', ...fields }),
});

async function routed(text: string) {
  const address = newAddress();
  await ask(suite.app, address, text);
  return suite.app.butler.store.routing.list(`console:local:ops:${address.thread}`);
}

const butlerRequests = () => suite.model.requests.filter(isButler);

describe(`routing decisions on ${databaseKind}`, () => {
  it('sends a confident delegation straight to the agent; Butler writes the reply from its result', async () => {
    suite.model.enqueueFor(
      isRouting,
      decision({ intent: 'delegate', agent: 'ops', confidence: 0.95, reasoning: 'ops work' }),
    );
    suite.model.enqueueFor(byAgent('ops'), { text: 'api: 3/3 healthy' });
    suite.model.enqueue({ text: 'api is healthy.' });
    const [stored] = await routed('is api healthy?');

    const routing = suite.model.requests.find(isRouting);
    expect(routing?.model).toBe('router-model');
    expect(routing?.body.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'routing_decision', strict: true },
    });
    expect(String(routing?.messages[0]?.content)).toContain(
      '- ops: Checks and restarts production services.',
    );
    const [opsRequest] = suite.model.requests.filter(byAgent('ops'));
    expect(String(opsRequest?.messages[1]?.content)).toMatch(/^is api healthy\?/);
    expect(butlerRequests()).toHaveLength(1);
    expect(Object.values(toolResults(suite.model, 0))).toEqual(['api: 3/3 healthy']);
    expect(suite.platform.finalTexts().at(-1)).toBe('_Asking ops…_\n\napi is healthy.');
    expect(stored).toMatchObject({
      intent: 'delegate',
      agent: 'ops',
      confidence: 0.95,
      reasoning: 'ops work',
      action: 'delegated',
      error: null,
      model: 'router-model',
    });
  });

  it("counts the routing model's tokens with the turn's, as its usage and budgets see them", async () => {
    suite.model.enqueueFor(isRouting, {
      ...decision({}),
      usage: { promptTokens: 300, completionTokens: 20 },
    });
    suite.model.enqueue({ text: 'Answered.', usage: { promptTokens: 100, completionTokens: 10 } });
    const address = newAddress();
    await ask(suite.app, address, 'hello');
    const totals = await suite.app.butler.store.usage.totals({
      conversationKey: `console:local:ops:${address.thread}`,
      since: new Date(Date.now() - 60_000),
    });
    expect(totals).toMatchObject({ turns: 1, promptTokens: 400, completionTokens: 30 });
  });

  it('leaves a low-confidence delegation to Butler’s own model', async () => {
    suite.model.enqueueFor(isRouting, decision({ intent: 'delegate', agent: 'ops', confidence: 0.4 }));
    suite.model.enqueue({ text: 'Answered myself.' });
    const [stored] = await routed('maybe ops?');
    expect(suite.model.requests.filter(byAgent('ops'))).toHaveLength(0);
    expect(suite.platform.finalTexts().at(-1)).toBe('Answered myself.');
    expect(stored).toMatchObject({ intent: 'delegate', action: 'answer' });
  });

  it('has Butler ask a question when the request is unclear', async () => {
    suite.model.enqueueFor(
      isRouting,
      decision({ intent: 'clarify', confidence: 0.8, reasoning: 'which service is meant' }),
    );
    suite.model.enqueue({ text: 'Which service do you mean?' });
    const [stored] = await routed('restart it');
    expect(String(butlerRequests()[0]?.messages[0]?.content)).toContain(
      'A routing step found the request unclear (which service is meant). Ask the person one short clarifying question',
    );
    expect(stored).toMatchObject({ intent: 'clarify', action: 'clarify' });
  });

  it('accepts a decision wrapped in a code fence', async () => {
    suite.model.enqueueFor(isRouting, {
      text: `Here you go:\n\`\`\`json\n${decision({}).text}\n\`\`\``,
    });
    suite.model.enqueue({ text: 'Hello!' });
    const [stored] = await routed('hello');
    expect(stored).toMatchObject({ intent: 'direct_answer', action: 'answer', error: null });
  });

  it.each([
    ['not JSON', { text: 'I think ops should do it.' }, /no JSON object/],
    ['an unknown agent', decision({ intent: 'delegate', agent: 'sales' }), /unknown agent "sales"/],
    ['a confidence out of range', decision({ confidence: 7 }), /confidence/],
    ['a failing model', { status: 500, body: { error: { message: 'down' } } }, /./],
  ])('falls back to a normal turn on %s, and stores why', async (_label, reply, error) => {
    suite.model.enqueueFor(isRouting, reply);
    suite.model.enqueue({ text: 'Normal answer.' });
    const [stored] = await routed('hi');
    expect(suite.platform.finalTexts().at(-1)).toBe('Normal answer.');
    expect(stored).toMatchObject({ intent: null, action: 'fallback' });
    expect(stored?.error).toMatch(error);
  });

  it('falls back when the routing model is slower than its timeout', async () => {
    suite.model.enqueueFor(isRouting, { hang: true });
    suite.model.enqueue({ text: 'Answered without routing.' });
    const started = Date.now();
    const [stored] = await routed('hi there');
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(suite.platform.finalTexts().at(-1)).toBe('Answered without routing.');
    expect(stored).toMatchObject({ action: 'fallback' });
  });
});

describe(`sub-agent deadlines on ${databaseKind}`, () => {
  it('returns an error to Butler when a sub-agent outlasts its timeout; Butler still answers', async () => {
    suite.model.enqueueFor(isRouting, decision({}));
    suite.model.enqueue(delegating(['ops', 'Check api.']), { text: 'ops did not answer in time.' });
    suite.model.enqueueFor(byAgent('ops'), { hang: true });
    const started = Date.now();
    await ask(suite.app, newAddress(), 'check api');
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(Object.values(toolResults(suite.model, 1))).toEqual([
      'Error: the ops agent failed: it did not finish within 3 s.',
    ]);
    expect(suite.platform.finalTexts().at(-1)).toContain('ops did not answer in time.');
  });
});
