import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestButler } from '../../helpers/butler-app.js';
import { dumpDatabase } from '../../helpers/database-dump.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { type OAuthMcpServer, startOAuthMcpServer } from '../../helpers/oauth-mcp-server.js';
import {
  appMention,
  asForm,
  asJson,
  blockActions,
  envelope,
  postToSlack,
} from '../../unit/slack/payloads.js';
import { freshTs, startSlackButler } from '../slack/slack-butler.js';
import {
  connectThrough,
  linksIn,
  oauthEnv,
  oauthServerConfig,
  offeredTools,
  toolResultsOf,
} from './oauth-butler.js';

/**
 * A remote MCP server behind OAuth 2.1 (a strict provider built with the official SDK's server side), used
 * from Slack by two people, each as themselves: the call parks the turn, the person gets a private Connect
 * link (never in the thread), and after they sign in the parked call runs as them and the turn goes on.
 */

let fake: FakeSlackApi;
let model: FakeModelServer;
let provider: OAuthMcpServer;
let app: TestButler;

const alice = { id: 'U0ALICE', name: 'alice' };
const bob = { id: 'U0BOB', name: 'bob' };
const approver = { id: 'U0APPROVER', name: 'olga' };

function slackOptions(extra: { dataDir?: string; databaseUrl?: string } = {}) {
  return {
    env: oauthEnv,
    config: {
      mcpServers: oauthServerConfig(provider),
      tools: [
        {
          name: 'my_ticket_account',
          description: 'Which tickets account the asker uses.',
          risk: 'low',
          http: { method: 'GET', url: `${provider.url}/me`, auth: { connection: 'tickets' } },
        },
      ],
      approvers: { slack: [approver.id] },
      agents: [
        {
          name: 'triage',
          description: 'Looks things up in the ticket tracker.',
          instructions: 'Answer from the ticket tracker.',
          tools: ['tickets__whoami'],
        },
      ],
    },
    ...extra,
  };
}

beforeAll(async () => {
  fake = await startFakeSlackApi();
  model = await startFakeModelServer();
  provider = await startOAuthMcpServer();
  app = await startSlackButler(fake, model, undefined, slackOptions());
});
afterAll(async () => {
  await app?.close();
  await provider.close();
  await model.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  model.reset();
});

/** `who` mentions Butler in a new thread of #general. */
async function ask(target: TestButler, who: { id: string }, text: string) {
  const ts = freshTs();
  await postToSlack(
    `${target.url}/slack/events`,
    asJson(envelope(appMention({ ts, user: who.id, text: `<@U0BUTLER> ${text}` }))),
  );
  await target.settle();
  return ts;
}

/** The Connect link Butler showed `who` alone (an ephemeral message). */
function privateLink(who: { id: string }): string {
  const shown = fake.callsTo('chat.postEphemeral').filter((call) => call.args.user === who.id);
  const link = linksIn(JSON.stringify(shown.at(-1)?.args ?? {})).at(0);
  if (!link) throw new Error(`no Connect link was shown to ${who.id}`);
  return link;
}

/** Every Slack call but the ephemeral ones: what others in the channel can see. */
const publicCalls = () => fake.calls.filter((call) => call.method !== 'chat.postEphemeral');

const call = (name: string, args: object = {}) => ({
  id: `call_${name}_${freshTs()}`,
  name,
  arguments: JSON.stringify(args),
});

describe('OAuth MCP connections from Slack', () => {
  it('gives two people their own private links, and runs each one’s calls as them', async () => {
    expect(app.butler.toolNames()).toContain('tickets__connect');
    model.enqueue({ toolCalls: [call('tickets__connect')] });
    await ask(app, alice, 'connect my tickets account');
    const link = privateLink(alice);
    expect(JSON.stringify(publicCalls())).not.toContain('/connect/');
    expect(JSON.stringify(publicCalls())).toContain('private link');

    model.enqueue({ toolCalls: [call('tickets__whoami')] }, { text: 'You are alice@tickets.' });
    const connected = await connectThrough(link, app.url, 'alice@tickets');
    expect(connected.status).toBe(200);
    // PKCE S256 and the resource indicator went with the authorization request.
    expect(connected.authorization.searchParams.get('code_challenge_method')).toBe('S256');
    expect(connected.authorization.searchParams.get('resource')).toBe(provider.url);
    await app.settle();
    // The continuation was told what the server offers, and offered those tools.
    expect(Object.values(toolResultsOf(model.requests[1])).join()).toMatch(
      /tickets is connected as .+tickets__whoami/,
    );
    expect(offeredTools(model)).toEqual(
      expect.arrayContaining(['tickets__whoami', 'tickets__create_ticket']),
    );

    model.enqueue({ toolCalls: [call('tickets__whoami')] });
    await ask(app, bob, 'who am I on tickets?');
    const bobLink = privateLink(bob);
    expect(bobLink).not.toBe(link);
    model.enqueue({ text: 'You are bob@tickets.' });
    expect((await connectThrough(bobLink, app.url, 'bob@tickets')).status).toBe(200);
    await app.settle();

    expect(provider.calls().map((entry) => [entry.tool, entry.account])).toEqual([
      ['whoami', 'alice@tickets'],
      ['whoami', 'bob@tickets'],
    ]);
    expect(JSON.stringify(publicCalls())).not.toContain('/connect/');

    // A replayed callback changes nothing.
    const exchanges = provider.stats().codeExchanges;
    const replay = await fetch(connected.callback);
    expect(replay.status).toBe(400);
    expect(provider.stats().codeExchanges).toBe(exchanges);
    // A used link is gone.
    expect(
      (
        await fetch(link.replace('https://butler.example.com', app.url), {
          method: 'POST',
          redirect: 'manual',
        })
      ).status,
    ).toBe(410);
  });

  it('refreshes an expired token without the person, once, and never shows a new link', async () => {
    provider.expireAccessTokens();
    const refreshes = provider.stats().refreshes;
    model.enqueue({ toolCalls: [call('tickets__whoami')] }, { text: 'Still alice.' });
    await ask(app, alice, 'who am I?');
    expect(provider.calls().at(-1)).toMatchObject({ tool: 'whoami', account: 'alice@tickets' });
    expect(provider.stats().refreshes).toBe(refreshes + 1);
    expect(fake.callsTo('chat.postEphemeral')).toEqual([]);
  });

  it('sends an HTTP tool’s request with the asker’s own token', async () => {
    model.enqueue({ toolCalls: [call('my_ticket_account')] }, { text: 'alice@tickets.' });
    await ask(app, alice, 'which tickets account do I use?');
    expect(provider.calls().at(-1)).toMatchObject({ tool: 'http:me', account: 'alice@tickets' });
    expect(Object.values(toolResultsOf(model.requests.at(-1)))).toEqual(['{"account":"alice@tickets"}']);
  });

  it('runs an approved high-risk call as the person who asked, not as the approver', async () => {
    model.enqueue({ toolCalls: [call('tickets__create_ticket', { title: 'Printer on fire' })] });
    const threadTs = await ask(app, alice, 'file a ticket: printer on fire');
    const card = fake
      .callsTo('chat.postMessage')
      .find((entry) => JSON.stringify(entry.args.blocks ?? '').includes('butler_approve'));
    const approvalId = /"value":"([0-9a-f-]{36})"/.exec(JSON.stringify(card?.args.blocks))?.[1] ?? '';
    const cardTs =
      [...fake.messages.values()].find((message) => message.blocks === card?.args.blocks)?.ts ?? '';
    model.enqueue({ text: 'Filed.' });
    await postToSlack(
      `${app.url}/slack/events`,
      asForm(
        blockActions({ approvalId, actionId: 'butler_approve', messageTs: cardTs, threadTs, user: approver }),
      ),
    );
    await app.settle();
    expect(provider.tickets().at(-1)).toMatchObject({ account: 'alice@tickets', title: 'Printer on fire' });
    const audit = await app.butler.store.reads.audit({ limit: 20, tool: 'tickets__create_ticket' });
    expect(
      audit.items.find(
        (entry) => entry.toolName === 'tickets__create_ticket' && entry.outcome === 'succeeded',
      ),
    ).toMatchObject({
      actor: alice.id,
      decidedBy: approver.id,
    });
  });

  it('parks an approved call whose connection lapsed while it waited, and runs it once after the person connects', async () => {
    model.enqueue({ toolCalls: [call('tickets__create_ticket', { title: 'Coffee machine' })] });
    const threadTs = await ask(app, alice, 'file a ticket: coffee machine');
    const cards = () =>
      fake
        .callsTo('chat.postMessage')
        .filter((entry) => JSON.stringify(entry.args.blocks ?? '').includes('butler_approve'));
    const [card] = cards();
    const approvalId = /"value":"([0-9a-f-]{36})"/.exec(JSON.stringify(card?.args.blocks))?.[1] ?? '';
    const cardTs =
      [...fake.messages.values()].find((message) => message.blocks === card?.args.blocks)?.ts ?? '';
    // Alice's connection lapses while the card waits.
    await app.butler.store.connections.delete('tickets', 'slack:U0ALICE');
    const ticketsBefore = provider.tickets().length;
    await postToSlack(
      `${app.url}/slack/events`,
      asForm(
        blockActions({ approvalId, actionId: 'butler_approve', messageTs: cardTs, threadTs, user: approver }),
      ),
    );
    await app.settle();
    expect(provider.tickets()).toHaveLength(ticketsBefore);
    const link = privateLink(alice);
    model.enqueue({ text: 'Filed, as you.' });
    expect((await connectThrough(link, app.url, 'alice@tickets')).status).toBe(200);
    await app.settle();
    expect(provider.tickets().slice(ticketsBefore)).toEqual([
      expect.objectContaining({ account: 'alice@tickets', title: 'Coffee machine' }),
    ]);
    // Approved once: no second card, and the model was told the call's own result.
    expect(cards()).toHaveLength(1);
    expect(Object.values(toolResultsOf(model.requests.at(-1))).join()).toContain('created ticket #');
  });

  it('parks a sub-agent whose call needs a connection, and goes on with the agent once the person connects', async () => {
    const dave = { id: 'U0DAVE', name: 'dave' };
    model.enqueue(
      { toolCalls: [call('delegate', { agent: 'triage', task: 'Which tickets account is this?' })] },
      { toolCalls: [call('tickets__whoami')] },
    );
    await ask(app, dave, 'ask triage which tickets account I have');
    const link = privateLink(dave);
    expect(provider.calls().filter((entry) => entry.account === 'dave@tickets')).toEqual([]);
    model.enqueue({ text: 'The account is dave@tickets.' }, { text: 'Triage says: dave@tickets.' });
    expect((await connectThrough(link, app.url, 'dave@tickets')).status).toBe(200);
    await app.settle();
    expect(provider.calls().at(-1)).toMatchObject({ tool: 'whoami', account: 'dave@tickets' });
    // The agent read the call's result, and Butler read the agent's answer.
    const [agentRequest, butlerRequest] = model.requests.slice(-2);
    expect(Object.values(toolResultsOf(agentRequest)).join()).toContain('dave@tickets');
    expect(Object.values(toolResultsOf(butlerRequest)).join()).toContain('The account is dave@tickets.');
  });

  it('disconnects: revokes at the server and deletes the tokens; the next call asks to connect again', async () => {
    const revocations = provider.stats().revocations;
    model.enqueue({ toolCalls: [call('disconnect', { server: 'tickets' })] }, { text: 'Disconnected.' });
    await ask(app, bob, 'disconnect tickets');
    expect(provider.stats().revocations).toBeGreaterThan(revocations);
    expect(await app.butler.store.connections.get('tickets', 'slack:U0BOB')).toBeUndefined();
    model.enqueue({ toolCalls: [call('tickets__whoami')] });
    await ask(app, bob, 'who am I on tickets?');
    expect(privateLink(bob)).toMatch(/\/connect\//);
  });

  it('keeps no token readable in the database (a dump of every table)', async () => {
    const tokens = provider.issuedTokens();
    expect(tokens.length).toBeGreaterThan(0);
    const dump = await dumpDatabase(app);
    expect(dump).toContain('oauth_connections');
    for (const token of tokens) expect(dump).not.toContain(token);
  });

  it('goes on after a restart between the link and the callback', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'butler-oauth-'));
    const first = await startSlackButler(fake, model, undefined, slackOptions({ dataDir }));
    const carol = { id: 'U0CAROL', name: 'carol' };
    let second: TestButler | undefined;
    try {
      // A new database: nobody has connected tickets there yet, so only its connect tool is offered.
      model.enqueue({ toolCalls: [call('tickets__connect')] });
      await ask(first, carol, 'who am I on tickets?');
      const link = privateLink(carol);
      await first.stop();
      second = await startSlackButler(
        fake,
        model,
        undefined,
        slackOptions({ dataDir, ...(first.databaseUrl ? { databaseUrl: first.databaseUrl } : {}) }),
      );
      model.enqueue({ toolCalls: [call('tickets__whoami')] }, { text: 'You are carol@tickets.' });
      expect((await connectThrough(link, second.url, 'carol@tickets')).status).toBe(200);
      await second.settle();
      expect(provider.calls().at(-1)).toMatchObject({ tool: 'whoami', account: 'carol@tickets' });
      expect(Object.values(toolResultsOf(model.requests.at(-1)))).toContain('carol@tickets');
    } finally {
      await second?.close();
      await first.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
