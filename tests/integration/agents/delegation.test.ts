import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { auditLog } from '../../../src/storage/schema.js';
import { databaseKind } from '../../helpers/database.js';
import {
  ask,
  byAgent,
  delegating,
  docsInstructions,
  isButler,
  newAddress,
  opsInstructions,
  toolResults,
  useAgentButler,
} from './agent-fixtures.js';

/** Butler delegating to specialists through the running core: real model client, tools over HTTP, real database. */

const suite = useAgentButler();

const agentRequests = (name: string) => suite.model.requests.filter(byAgent(name));

describe(`delegation to specialist agents on ${databaseKind}`, () => {
  it('offers Butler a delegate tool naming the agents, and gives a sub-agent only its task and tools', async () => {
    suite.model.enqueue(delegating(['ops', 'Is payments-api healthy?']), {
      text: 'payments-api is healthy.',
    });
    suite.model.enqueueFor(byAgent('ops'), {
      text: 'Healthy: 3/3 pods ready.',
      usage: { promptTokens: 120, completionTokens: 8 },
    });
    await ask(suite.app, newAddress(), 'how is payments-api doing?');

    const delegate = suite.model.requests[0]?.tools?.find(
      (tool) => (tool.function as { name: string }).name === 'delegate',
    )?.function as { parameters: { properties: { agent: { enum: string[] } } } };
    expect(delegate.parameters.properties.agent.enum).toEqual(['ops', 'docs']);

    const [ops] = agentRequests('ops');
    expect(ops?.messages).toHaveLength(2);
    expect(String(ops?.messages[0]?.content)).toContain(opsInstructions);
    expect(ops?.messages[1]).toEqual({
      role: 'user',
      content: 'Is payments-api healthy?\n\nContext from Butler:\nAsked in #ops.',
    });
    expect(JSON.stringify(ops?.messages)).not.toContain('how is payments-api doing?');
    expect((ops?.tools ?? []).map((tool) => (tool.function as { name: string }).name).sort()).toEqual([
      'restart_service',
      'service_status',
    ]);

    expect(Object.values(toolResults(suite.model, 1))).toEqual(['Healthy: 3/3 pods ready.']);
    const reply = suite.platform.replies.at(-1);
    expect(reply?.deltas[0]).toBe('_Asking ops…_');
    expect(reply?.finalText).toBe('_Asking ops…_\n\npayments-api is healthy.');
    const stored = await suite.app.butler.store.conversations.find(
      `console:local:ops:${reply?.target.address.thread}`,
    );
    expect(stored).toBeDefined();
  });

  it('runs two delegations of one step in parallel and hands both results back in call order', async () => {
    suite.model.enqueue(delegating(['ops', 'Check payments-api.'], ['docs', 'Find the rollback runbook.']), {
      text: 'Both answered.',
    });
    suite.model.enqueueFor(byAgent('ops'), {
      text: 'ops: all good',
      chunks: ['ops: all ', 'good'],
      chunkDelayMs: 300,
    });
    suite.model.enqueueFor(byAgent('docs'), {
      text: 'docs: see RB-7',
      chunks: ['docs: see ', 'RB-7'],
      chunkDelayMs: 300,
    });
    const started = Date.now();
    await ask(suite.app, newAddress(), 'check payments-api and find the rollback runbook');

    const [ops] = agentRequests('ops');
    const [docs] = agentRequests('docs');
    expect(String(docs?.messages[0]?.content)).toContain(docsInstructions);
    // Each run streams for ~300 ms: in sequence the second would start after the first had finished.
    expect(Math.abs((ops?.receivedAt ?? 0) - (docs?.receivedAt ?? Number.MAX_SAFE_INTEGER))).toBeLessThan(
      250,
    );
    expect(docs?.tools).toBeUndefined();
    expect(Object.values(toolResults(suite.model, 1))).toEqual(['ops: all good', 'docs: see RB-7']);
    expect(suite.platform.replies.at(-1)?.deltas[0]).toBe('_Asking ops and docs…_');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("runs a sub-agent's low-risk tool at once and audits it under the agent", async () => {
    suite.model.enqueue(delegating(['ops', 'Status of api?']), { text: 'api is up.' });
    suite.model.enqueueFor(
      byAgent('ops'),
      { toolCalls: [{ id: 'ops_status', name: 'service_status', arguments: '{"service":"api"}' }] },
      { text: 'api: ok' },
    );
    await ask(suite.app, newAddress(), 'is api up?');
    expect(suite.tools.requests.map((request) => request.path)).toEqual(['/service_status?service=api']);
    expect(agentRequests('ops')[1]?.messages.at(-1)).toMatchObject({
      role: 'tool',
      tool_call_id: 'ops_status',
    });
    expect(Object.values(toolResults(suite.model, 1))).toEqual(['api: ok']);
    const [row] = await suite.app.butler.database.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.toolCallId, 'ops_status'));
    expect(row).toMatchObject({ agent: 'ops', toolName: 'service_status', decision: 'auto', actor: 'ana' });
  });

  it('refuses a tool outside the agent’s list even when its model asks for it', async () => {
    suite.model.enqueue(delegating(['ops', 'Scale api to 5.']), { text: 'ops could not scale it.' });
    suite.model.enqueueFor(
      byAgent('ops'),
      { toolCalls: [{ id: 'ops_scale', name: 'scale_service', arguments: '{"service":"api"}' }] },
      { text: 'I may not scale services.' },
    );
    await ask(suite.app, newAddress(), 'scale api');
    expect(suite.tools.requests).toEqual([]);
    expect(String(agentRequests('ops')[1]?.messages.at(-1)?.content)).toMatch(
      /^Error: unknown tool "scale_service"/,
    );
    expect(
      suite.platform.cards.filter((card) =>
        card.card.calls.some((call) => call.toolName === 'scale_service'),
      ),
    ).toEqual([]);
  });

  it('reports an unknown agent to Butler as a tool error', async () => {
    suite.model.enqueue(delegating(['sales', 'Quote a price.']), { text: 'I have no sales agent.' });
    await ask(suite.app, newAddress(), 'quote a price');
    expect(Object.values(toolResults(suite.model, 1))[0]).toMatch(
      /^Error: unknown agent "sales". Agents: ops, docs./,
    );
    expect(suite.platform.finalTexts().at(-1)).toBe('I have no sales agent.');
  });

  it('hands back an error when a sub-agent’s model fails, and Butler still answers', async () => {
    suite.model.enqueue(delegating(['docs', 'Find RB-7.']), {
      text: 'The docs agent is unavailable right now.',
    });
    suite.model.enqueueFor(byAgent('docs'), { status: 400, body: { error: { message: 'bad request' } } });
    await ask(suite.app, newAddress(), 'find RB-7');
    expect(Object.values(toolResults(suite.model, 1))[0]).toMatch(
      /^Error: the docs agent failed: its model failed/,
    );
    expect(suite.platform.finalTexts().at(-1)).toContain('The docs agent is unavailable right now.');
  });

  it('stops a sub-agent at its step budget and says so to Butler', async () => {
    suite.model.enqueue(delegating(['ops', 'Keep checking.']), { text: 'ops ran out of steps.' });
    const check = (id: string) => ({
      toolCalls: [{ id, name: 'service_status', arguments: '{"service":"api"}' }],
    });
    suite.model.enqueueFor(byAgent('ops'), check('s1'), check('s2'), check('s3'), check('s4'));
    await ask(suite.app, newAddress(), 'keep checking api');
    expect(agentRequests('ops')).toHaveLength(4);
    expect(Object.values(toolResults(suite.model, 1))[0]).toBe(
      'Error: the ops agent failed: it stopped after 4 steps without finishing.',
    );
  });

  it('records token usage per agent', async () => {
    const since = new Date(Date.now() - 1000);
    const address = newAddress();
    suite.model.enqueue(delegating(['docs', 'Summarise RB-7.']), { text: 'Done.' });
    suite.model.enqueueFor(byAgent('docs'), {
      text: 'RB-7: roll back.',
      usage: { promptTokens: 50, completionTokens: 5 },
    });
    await ask(suite.app, address, 'summarise RB-7');
    const key = `console:local:ops:${address.thread}`;
    expect(await suite.app.butler.store.agentRuns.usageByAgent(since, key)).toEqual([
      { agent: 'docs', runs: 1, promptTokens: 50, completionTokens: 5 },
    ]);
    expect(suite.model.requests.filter(isButler)).toHaveLength(2);
  });
});
