import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeConversationKey } from '../../../src/core/contracts/conversation-key.js';
import type { ConversationAddress } from '../../../src/core/contracts/events.js';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';

/**
 * An API key limited to tenants (`api.keys[].tenants`) reads and decides only within them, and reaches no
 * endpoint that does not narrow to tenants; any key can narrow a read with `?tenant=`.
 */

const keys = { admin: 'admin-key-0123456789abcdef', teamA: 'team-a-key-0123456789abcdef' };
const teamA = 'T0AAAAAAA1';
const teamB = 'T0BBBBBBB2';

let model: FakeModelServer;
let tools: ToolServer;
let app: TestButler;
/** A pending restart in each workspace's #ops, by team. */
const approvalOf = new Map<string, string>();
const addressIn = (team: string): ConversationAddress => ({
  platform: 'slack',
  workspace: team,
  channel: 'C0OPS',
  thread: '1700000000.000100',
});

function api(key: string, path: string, init: RequestInit = {}) {
  return fetch(`${app.url}/api/v1${path}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  });
}
async function json(key: string, path: string) {
  const response = await api(key, path);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
const workspacesOf = (body: Record<string, unknown>) =>
  new Set(
    (body.items as Array<{ address?: { workspace: string }; conversationKey?: string }>).map(
      (item) => item.address?.workspace ?? item.conversationKey?.split(':')[1],
    ),
  );

beforeAll(async () => {
  model = await startFakeModelServer();
  tools = await startToolServer();
  app = await startTestButler({
    env: {
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'test-model',
      KEY_ADMIN: keys.admin,
      KEY_TEAM_A: keys.teamA,
    },
    config: {
      approvers: { console: ['olga'], api: ['admin', 'team-a'] },
      tools: [
        {
          name: 'restart_service',
          description: 'Restart a service.',
          risk: 'high',
          input: { type: 'object', properties: { service: { type: 'string' } } },
          http: { method: 'POST', url: `${tools.url}/restart_service` },
        },
      ],
      api: {
        keys: [
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
          { name: 'admin', key: '${KEY_ADMIN}', scopes: ['read', 'approve'] },
          {
            name: 'team-a',
            // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
            key: '${KEY_TEAM_A}',
            scopes: ['read', 'approve'],
            tenants: [`slack:${teamA}`],
          },
        ],
      },
    },
    adapters: [new RecordingAdapter('slack')],
  });
  for (const team of [teamA, teamB]) {
    model.enqueue({
      toolCalls: [{ id: `call_${team}`, name: 'restart_service', arguments: '{"service":"api"}' }],
    });
    await app.butler.service.accept(
      inboundMessage({ text: 'restart api', address: addressIn(team), user: { id: 'U0ANA', name: 'Ana' } }),
    );
    await app.settle();
    const [approval] = (await app.butler.store.reads.approvals({ limit: 5, status: 'pending' })).items.filter(
      (item) => item.conversationKey === encodeConversationKey(addressIn(team)),
    );
    approvalOf.set(team, approval?.id ?? '');
  }
});
afterAll(async () => {
  await app?.close();
  await model?.close();
  await tools?.close();
});

describe('API keys limited to tenants', () => {
  it('list only their tenants’ conversations, approvals and usage', async () => {
    const me = await json(keys.teamA, '/me');
    expect(me.body).toEqual({ name: 'team-a', scopes: ['read', 'approve'], tenants: [`slack:${teamA}`] });
    for (const path of ['/conversations', '/approvals']) {
      expect(workspacesOf((await json(keys.teamA, path)).body)).toEqual(new Set([teamA]));
      expect(workspacesOf((await json(keys.admin, path)).body)).toEqual(new Set([teamA, teamB]));
    }
    const usage = await json(keys.teamA, '/usage?groupBy=workspace');
    expect((usage.body.items as Array<{ key: string }>).map((row) => row.key)).toEqual([teamA]);
  });

  it('find nothing of another tenant, and cannot decide its approvals', async () => {
    const other = encodeURIComponent(encodeConversationKey(addressIn(teamB)));
    expect((await api(keys.teamA, `/conversations/${other}`)).status).toBe(404);
    expect((await api(keys.teamA, `/approvals/${approvalOf.get(teamB)}`)).status).toBe(404);
    const decide = (key: string, team: string) =>
      api(key, `/approvals/${approvalOf.get(team)}/decision`, {
        method: 'POST',
        body: JSON.stringify({ decision: 'reject', reason: 'not now' }),
      });
    expect((await decide(keys.teamA, teamB)).status).toBe(404);
    expect((await app.butler.store.approvals.get(approvalOf.get(teamB) ?? ''))?.status).toBe('pending');
    expect((await decide(keys.teamA, teamA)).status).toBe(200);
    expect((await app.butler.store.approvals.get(approvalOf.get(teamA) ?? ''))?.status).toBe('rejected');
  });

  it('reach no endpoint that reads every tenant, and cannot widen themselves with ?tenant=', async () => {
    for (const path of ['/audit', '/feedback', '/budgets', '/schedules', '/events'])
      expect((await api(keys.teamA, path)).status, path).toBe(403);
    expect((await api(keys.teamA, `/conversations?tenant=slack:${teamB}`)).status).toBe(403);
    expect((await api(keys.teamA, '/conversations?tenant=nonsense')).status).toBe(400);
    // A made-up id is not found, whoever asks; never a database error.
    for (const key of [keys.teamA, keys.admin])
      for (const path of ['/approvals/not-an-id', '/approval-batches/not-an-id'])
        expect((await api(key, path)).status, path).toBe(404);
  });

  it('leave a request of a workspace Butler was removed from to nobody, until Butler is back', async () => {
    const decide = () =>
      api(keys.admin, `/approvals/${approvalOf.get(teamB)}/decision`, {
        method: 'POST',
        body: JSON.stringify({ decision: 'reject', reason: 'not now' }),
      });
    await app.butler.service.workspaceRemoved('slack', teamB);
    const listed = await json(keys.admin, `/approvals?tenant=slack:${teamB}&status=pending`);
    expect(listed.body.items).toEqual([
      expect.objectContaining({
        mayDecide: false,
        whyNot: 'It waits until Butler is added to its workspace again.',
      }),
    ]);
    expect((await decide()).status).toBe(403);
    expect((await app.butler.store.approvals.get(approvalOf.get(teamB) ?? ''))?.status).toBe('pending');
    await app.butler.service.workspaceInstalled('slack', teamB);
    expect((await decide()).status).toBe(200);
  });

  it('let any key narrow a read to one tenant', async () => {
    const narrowed = await json(keys.admin, `/approvals?tenant=slack:${teamB}`);
    expect(workspacesOf(narrowed.body)).toEqual(new Set([teamB]));
  });
});
