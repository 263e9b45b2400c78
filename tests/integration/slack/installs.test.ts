import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestButler } from '../../helpers/butler-app.js';
import { testDatabaseUrl } from '../../helpers/database.js';
import { dumpDatabase } from '../../helpers/database-dump.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import type { FakeWorkspaceInstall } from '../../helpers/fake-slack-oauth.js';
import { serviceTools } from '../../helpers/platform-butler.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';
import { waitForAsync } from '../../helpers/wait-for.js';
import {
  appMention,
  asForm,
  asJson,
  clickFrom,
  envelope,
  envelopeFor,
  postToSlack,
} from '../../unit/slack/payloads.js';
import { freshTs, startSlackButler } from './slack-butler.js';

// Butler installed over OAuth ("Add to Slack") in two workspaces, with no SLACK_BOT_TOKEN: each workspace's
// events are answered with that workspace's own token, the same channel and user ids in both stay two
// conversations, and a workspace that removes Butler is no longer served until it installs it again.

const teamA: FakeWorkspaceInstall = {
  teamId: 'T0AAAAAAA',
  botUserId: 'U0BOTA',
  botId: 'B0BOTA',
  installerId: 'U0ADMINA',
};
const teamB: FakeWorkspaceInstall = {
  teamId: 'T0BBBBBBB',
  botUserId: 'U0BOTB',
  botId: 'B0BOTB',
  installerId: 'U0ADMINB',
};

let fake: FakeSlackApi;
let model: FakeModelServer;
let tools: ToolServer;
let app: TestButler;
let slackUrl: string;

const secretKey = randomBytes(32).toString('base64');
const adminKey = `butler-admin-${randomBytes(12).toString('hex')}`;

/** A Butler that installs over OAuth, on `databaseUrl` when given (a second process of the same Butler). */
function startInstallingButler(databaseUrl?: string, extra: Record<string, unknown> = {}) {
  return startSlackButler(fake, model, tools, {
    env: {
      SLACK_BOT_TOKEN: '',
      SLACK_CLIENT_ID: fake.oauth.clientId,
      SLACK_CLIENT_SECRET: fake.oauth.clientSecret,
      SLACK_STATE_SECRET: 'state-secret-for-tests',
      BUTLER_PUBLIC_URL: 'https://butler.example.com',
      BUTLER_SECRET_KEY: secretKey,
    },
    // Olga approves in workspace A only: her member id in B is somebody else's, and B has no approver.
    config: {
      approvers: { slack: [`${teamA.teamId}/U0OLGA`] },
      tools: serviceTools(tools),
      api: { keys: [{ name: 'admin', key: adminKey, scopes: ['read'] }] },
      ...extra,
    },
    ...(databaseUrl ? { databaseUrl } : {}),
  });
}

beforeAll(async () => {
  fake = await startFakeSlackApi();
  model = await startFakeModelServer();
  tools = await startToolServer();
  app = await startInstallingButler();
  slackUrl = `${app.url}/slack/events`;
});
afterAll(async () => {
  await app?.close();
  await model.close();
  await tools.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  model.reset();
  tools.requests.length = 0;
});

/** Opens the install page as a browser would: the authorize URL it links to, and the state cookie it set. */
async function openInstallPage(base = app.url) {
  const page = await fetch(`${base}/slack/install`);
  expect(page.status).toBe(200);
  const link = (await page.text()).match(/<a href="([^"]+)"/)?.[1] ?? '';
  const href = link.replace(/&#(\d+);/g, (_entity, code: string) => String.fromCharCode(Number(code)));
  const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  return { authorize: new URL(href), cookie };
}

/** Slack sends the browser back with a code for `team`; `cookie` is what that browser carries. */
async function comeBack(team: FakeWorkspaceInstall, state: string, cookie: string, base = app.url) {
  const code = fake.oauth.issueCode(team);
  const query = new URLSearchParams({ code, state });
  return fetch(`${base}/slack/oauth_redirect?${query}`, { headers: cookie ? { cookie } : {} });
}

async function install(team: FakeWorkspaceInstall, base = app.url) {
  const { authorize, cookie } = await openInstallPage(base);
  return comeBack(team, authorize.searchParams.get('state') ?? '', cookie, base);
}

/** `user` mentions Butler in `channel` of `team`, as that workspace's Events API delivers it. */
function mention(team: FakeWorkspaceInstall, text: string, ts = freshTs()) {
  return mentionAt(slackUrl, team, text, ts);
}

function mentionAt(url: string, team: FakeWorkspaceInstall, text: string, ts = freshTs()) {
  const event = appMention({ ts, text: `<@${team.botUserId}> ${text}` });
  return postToSlack(url, asJson(envelopeFor(team.teamId, event, team.botUserId)));
}

const tokensUsed = () => new Set(fake.calls.map((call) => call.token));

describe('Slack installs over OAuth', () => {
  it('links "Add to Slack" to the manifest scopes, with a state bound to the browser', async () => {
    const { authorize, cookie } = await openInstallPage();
    expect(`${authorize.origin}${authorize.pathname}`).toBe('https://slack.com/oauth/v2/authorize');
    expect(authorize.searchParams.get('client_id')).toBe(fake.oauth.clientId);
    expect(authorize.searchParams.get('redirect_uri')).toBe(fake.oauth.redirectUri);
    expect(authorize.searchParams.get('scope')?.split(',')).toEqual(
      expect.arrayContaining(['chat:write', 'users:read']),
    );
    expect(cookie).toMatch(/^slack-app-oauth-state=.+/);
    // Ready with no installation yet, and saying how many there are.
    const readiness = await fetch(`${app.url}/readyz`);
    expect(readiness.status).toBe(200);
    const ready = (await readiness.json()) as { checks: Record<string, string> };
    expect(ready.checks.slack).toMatch(/^ok \(\d+ installations?\)$/);
  });

  it('completes an install only in the browser that started it', async () => {
    const { authorize } = await openInstallPage();
    const other = await openInstallPage();
    // The state of one browser's page, brought back by a browser holding another page's cookie, or none.
    for (const cookie of [other.cookie, '']) {
      const response = await comeBack(teamA, authorize.searchParams.get('state') ?? '', cookie);
      expect(response.status).toBe(400);
      expect(await response.text()).toContain('Butler was not installed');
    }
    expect(fake.callsTo('oauth.v2.access')).toHaveLength(0);
    expect(fake.oauth.tokenOf(teamA.teamId)).toBeUndefined();
  });

  it('answers two workspaces, each with its own token, the same channel and person kept apart', async () => {
    for (const team of [teamA, teamB]) {
      const response = await install(team);
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('Butler is installed');
    }
    const tokenA = fake.oauth.tokenOf(teamA.teamId);
    const tokenB = fake.oauth.tokenOf(teamB.teamId);
    const ready = (await (await fetch(`${app.url}/readyz`)).json()) as { checks: Record<string, string> };
    expect(ready.checks.slack).toBe('ok (2 installations)');

    fake.reset();
    model.enqueue({ text: 'Deploys are frozen in A.' });
    expect((await mention(teamA, 'the secret plan of team A is to freeze deploys')).status).toBe(200);
    await app.settle();
    expect(model.requests).toHaveLength(1);
    expect(tokensUsed()).toEqual(new Set([tokenA]));

    fake.reset();
    model.enqueue({ text: 'Hello B.' });
    // The same channel id (C0GENERAL) and person (U0ALICE), in the other workspace.
    expect((await mention(teamB, 'what did I say before?')).status).toBe(200);
    await app.settle();
    expect(model.requests).toHaveLength(2);
    expect(tokensUsed()).toEqual(new Set([tokenB]));
    expect(JSON.stringify(model.requests[1]?.messages)).not.toContain('secret plan');

    // No bot token is readable in the database.
    const dump = await dumpDatabase(app);
    for (const token of [tokenA, tokenB]) expect(dump).not.toContain(token);
  });

  it('stops answering a workspace that removed Butler, and answers it again once it is installed again', async () => {
    for (const team of [teamA, teamB]) if (!fake.oauth.tokenOf(team.teamId)) await install(team);
    // A daily task in B: it pauses with B, and resumes when B installs Butler again.
    const address = {
      platform: 'slack' as const,
      workspace: teamB.teamId,
      channel: 'C0GENERAL',
      thread: 'main',
    };
    const task = await app.butler.schedules.create({
      creator: { platform: 'slack', id: 'U0ALICE', name: 'Alice', timezone: 'UTC' },
      address,
      prompt: 'post the on-call rota',
      cron: '0 9 * * *',
      isDirect: false,
      source: 'chat',
    });
    const taskId = task.schedule.id;
    const statusOf = async () => (await app.butler.store.schedules.get(taskId))?.status;
    const uninstalled = envelope(
      { type: 'app_uninstalled', event_ts: freshTs() },
      { team_id: teamB.teamId, context_team_id: teamB.teamId, authorizations: undefined },
    );
    expect((await postToSlack(slackUrl, asJson(uninstalled))).status).toBe(200);
    const ready = (await (await fetch(`${app.url}/readyz`)).json()) as { checks: Record<string, string> };
    expect(ready.checks.slack).toBe('ok (1 installation)');
    expect(await statusOf()).toBe('paused');

    fake.reset();
    expect((await mention(teamB, 'are you there?')).status).toBe(200);
    await app.settle();
    expect(model.requests).toHaveLength(0);
    expect(fake.calls).toHaveLength(0);

    model.enqueue({ text: 'Still here for A.' });
    await mention(teamA, 'are you there?');
    await app.settle();
    expect(model.requests).toHaveLength(1);

    expect((await install(teamB)).status).toBe(200);
    expect(await statusOf()).toBe('active');
    fake.reset();
    model.enqueue({ text: 'Back in B.' });
    await mention(teamB, 'are you back?');
    await app.settle();
    expect(model.requests).toHaveLength(2);
    expect(tokensUsed()).toEqual(new Set([fake.oauth.tokenOf(teamB.teamId)]));
  });

  it("decides a card only by its own workspace's approvers, whatever member id a click carries", async () => {
    for (const team of [teamA, teamB]) if (!fake.oauth.tokenOf(team.teamId)) await install(team);
    /** A restart asked in `team`: its card's ts, thread and approval id. */
    async function askRestart(team: FakeWorkspaceInstall) {
      model.enqueue({
        toolCalls: [{ id: `call_${team.teamId}`, name: 'restart_service', arguments: '{"service":"api"}' }],
      });
      const threadTs = freshTs();
      await mention(team, 'restart api', threadTs);
      await app.settle();
      const card = fake
        .callsTo('chat.postMessage')
        .filter((call) => call.token === fake.oauth.tokenOf(team.teamId))
        .find((call) => JSON.stringify(call.args.blocks ?? '').includes('butler_approve'));
      const approvalId = JSON.stringify(card?.args.blocks).match(/"value":"([0-9a-f-]{36})"/)?.[1] ?? '';
      const cardTs =
        [...fake.messages.values()].find((message) => message.blocks === card?.args.blocks)?.ts ?? '';
      return { threadTs, cardTs, approvalId, shown: JSON.stringify(card?.args.blocks) };
    }
    const click = (team: FakeWorkspaceInstall, asked: Awaited<ReturnType<typeof askRestart>>) => {
      const fromTeam = clickFrom(team.teamId, {
        approvalId: asked.approvalId,
        actionId: 'butler_approve',
        messageTs: asked.cardTs,
        threadTs: asked.threadTs,
        user: { id: 'U0OLGA', name: 'olga' },
      });
      return postToSlack(slackUrl, asForm(fromTeam));
    };

    const inB = await askRestart(teamB);
    expect(inB.shown).toContain('no approver is configured');
    expect((await click(teamB, inB)).status).toBe(200);
    await fake.waitFor(() => fake.callsTo('chat.postEphemeral')[0]);
    await app.settle();
    expect(tools.requests).toHaveLength(0);
    expect(fake.callsTo('chat.postEphemeral')[0]?.token).toBe(fake.oauth.tokenOf(teamB.teamId));

    const inA = await askRestart(teamA);
    // Olga's member id in B opens Butler's Home there: nothing of A's shows, neither A's card nor A's threads.
    const opened = envelope(
      { type: 'app_home_opened', user: 'U0OLGA', channel: 'D0HOME', tab: 'home', event_ts: freshTs() },
      { team_id: teamB.teamId, context_team_id: teamB.teamId, authorizations: undefined },
    );
    await postToSlack(slackUrl, asJson(opened));
    const page = await fake.waitFor(() => fake.home.current('U0OLGA'));
    expect(fake.callsTo('views.publish').at(-1)?.token).toBe(fake.oauth.tokenOf(teamB.teamId));
    expect(JSON.stringify(page.view)).not.toContain(inA.approvalId);
    expect(JSON.stringify(page.view)).not.toContain('secret plan');
    model.enqueue({ text: 'Restarted.' });
    expect((await click(teamA, inA)).status).toBe(200);
    await fake.waitFor(() => tools.requests.length === 1 || undefined);
    await app.settle();
    expect(tools.requests).toHaveLength(1);
  });

  it('marks a workspace whose token Slack refuses, serves it no more, and serves it again once it installs again', async () => {
    const teamC: FakeWorkspaceInstall = {
      teamId: 'T0CCCCCCC',
      botUserId: 'U0BOTC',
      botId: 'B0BOTC',
      installerId: 'U0ADMINC',
    };
    await install(teamC);
    // The workspace was deleted on Slack's side: every call with its token answers account_inactive.
    fake.failNext('chat.startStream', { error: 'account_inactive' });
    fake.failNext('chat.postMessage', { error: 'account_inactive' }, 3);
    model.enqueue({ text: 'Nobody will read this.' });
    await mention(teamC, 'hello?');
    await app.settle();
    const readiness = async () =>
      ((await (await fetch(`${app.url}/readyz`)).json()) as { checks: Record<string, string> }).checks.slack;
    await waitForAsync(async () => (await readiness())?.includes('1 refusing its token') || undefined);

    fake.reset();
    await mention(teamC, 'anyone?');
    await app.settle();
    expect(model.requests).toHaveLength(1);
    expect(fake.calls).toHaveLength(0);

    await install(teamC);
    expect(await readiness()).not.toContain('refusing');
    model.enqueue({ text: 'Back.' });
    await mention(teamC, 'back?');
    await app.settle();
    expect(model.requests).toHaveLength(2);
  });

  it('lists the installations for admins: installer, scopes granted and missing, state, and never a token', async () => {
    for (const team of [teamA, teamB]) if (!fake.oauth.tokenOf(team.teamId)) await install(team);
    const response = await fetch(`${app.url}/api/v1/installations`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).not.toMatch(/xox/);
    const { items } = JSON.parse(text) as { items: Array<Record<string, unknown>> };
    expect(items.find((item) => item.workspace === teamA.teamId)).toMatchObject({
      installer: teamA.installerId,
      state: 'active',
      scopes: ['app_mentions:read', 'chat:write'],
      missingScopes: expect.arrayContaining(['users:read', 'files:read']),
    });
  });

  it("keeps a person's memories in the workspace they told them in", async () => {
    for (const team of [teamA, teamB]) if (!fake.oauth.tokenOf(team.teamId)) await install(team);
    const remember = JSON.stringify({ content: 'Alice takes her coffee black' });
    model.enqueue(
      { toolCalls: [{ id: 'call_remember', name: 'remember', arguments: remember }] },
      { text: 'Noted.' },
    );
    await mention(teamA, 'remember that I take my coffee black');
    await app.settle();
    // U0ALICE of workspace B is someone else: Butler recalls nothing of A's Alice for them.
    model.enqueue(
      { toolCalls: [{ id: 'call_recall', name: 'recall', arguments: JSON.stringify({ query: 'coffee' }) }] },
      { text: 'Nothing.' },
    );
    await mention(teamB, 'how do I take my coffee?');
    await app.settle();
    const recalled = model.requests.at(-1)?.messages.filter((message) => message.role === 'tool') ?? [];
    expect(JSON.stringify(recalled)).not.toContain('black');
    // In A, Alice's memory is hers.
    model.enqueue(
      {
        toolCalls: [{ id: 'call_recall_a', name: 'recall', arguments: JSON.stringify({ query: 'coffee' }) }],
      },
      { text: 'Black.' },
    );
    await mention(teamA, 'how do I take my coffee?');
    await app.settle();
    expect(JSON.stringify(model.requests.at(-1)?.messages)).toContain('Alice takes her coffee black');
  });

  it('serves an org-wide install (Enterprise Grid) in every workspace of the org, with the org token', async () => {
    const org: FakeWorkspaceInstall = {
      teamId: 'T0ORGSUB1',
      enterpriseId: 'E0ORG0000',
      isEnterpriseInstall: true,
      botUserId: 'U0BOTORG',
      botId: 'B0BOTORG',
      installerId: 'U0ORGADMIN',
    };
    expect((await install(org)).status).toBe(200);
    const orgToken = fake.oauth.tokenOf(org.teamId);
    fake.reset();
    model.enqueue({ text: 'Hello from the org.' });
    // An event of one workspace of the org, as Slack delivers it to an org-wide app.
    const event = { ...appMention({ ts: freshTs(), text: `<@${org.botUserId}> hi` }), team: 'T0ORGSUB2' };
    const authorization = {
      enterprise_id: 'E0ORG0000',
      team_id: null,
      user_id: org.botUserId,
      is_bot: true,
      is_enterprise_install: true,
    };
    const body = envelope(event, {
      team_id: 'T0ORGSUB2',
      enterprise_id: 'E0ORG0000',
      context_team_id: 'T0ORGSUB2',
      context_enterprise_id: 'E0ORG0000',
      authorizations: [authorization],
    });
    expect((await postToSlack(slackUrl, asJson(body))).status).toBe(200);
    await app.settle();
    expect(model.requests).toHaveLength(1);
    expect(tokensUsed()).toEqual(new Set([orgToken]));
  });

  it('refreshes an expired rotating token once, before it is used, and answers with the new one', async () => {
    // Token rotation on: this install's first bot token has expired already.
    const teamR: FakeWorkspaceInstall = { ...teamA, teamId: 'T0ROTATE0', rotating: { expiresIn: 0 } };
    expect((await install(teamR)).status).toBe(200);
    const first = fake.oauth.tokenOf(teamR.teamId);
    for (const text of ['hello', 'again']) {
      model.enqueue({ text: 'Hi.' });
      await mention(teamR, text);
      await app.settle();
    }
    expect(fake.oauth.refreshes).toHaveLength(1);
    const rotated = fake.oauth.tokenOf(teamR.teamId);
    expect(rotated).not.toBe(first);
    expect(fake.calls.filter((call) => call.token === first && call.method !== 'auth.test')).toEqual([]);
    expect(tokensUsed()).toContain(rotated);
    expect(await dumpDatabase(app)).not.toMatch(/xoxe/);
  });

  it('refreshes a rotating token ahead of its expiry in the background, answering with the current one meanwhile', async () => {
    // This token expires in a minute: inside the ten minutes ahead, still good.
    const teamE: FakeWorkspaceInstall = { ...teamA, teamId: 'T0EARLY00', rotating: { expiresIn: 60 } };
    expect((await install(teamE)).status).toBe(200);
    const first = fake.oauth.tokenOf(teamE.teamId);
    model.enqueue({ text: 'Hi.' });
    await mention(teamE, 'hello');
    await app.settle();
    expect(model.requests).toHaveLength(1);
    await waitForAsync(async () => fake.oauth.tokenOf(teamE.teamId) !== first || undefined);
    fake.reset();
    model.enqueue({ text: 'Hi again.' });
    await mention(teamE, 'again');
    await app.settle();
    expect(tokensUsed()).toEqual(new Set([fake.oauth.tokenOf(teamE.teamId)]));
  });
});

describe('Slack installs over OAuth, when things fail', () => {
  it('takes installs only from the workspaces access.slack.workspaces lists, when it is set', async () => {
    const listed = await startInstallingButler(undefined, {
      access: { slack: { workspaces: [teamA.teamId] } },
    });
    try {
      const stranger = await install({ ...teamB, teamId: 'T0STRANGE' }, listed.url);
      expect(stranger.status).toBe(409);
      expect(await stranger.text()).toContain('not offered to this workspace');
      // The token Slack gave for it is given back, not kept.
      expect(fake.oauth.revoked).toEqual([expect.stringContaining('T0STRANGE')]);
      expect((await install(teamA, listed.url)).status).toBe(200);
    } finally {
      await listed.close();
    }
  });

  it('ends an installation whose token Slack already refused, once it is removed', async () => {
    const teamD: FakeWorkspaceInstall = { ...teamA, teamId: 'T0DDDDDDD', botUserId: 'U0BOTD' };
    await install(teamD);
    fake.failNext('chat.startStream', { error: 'account_inactive' });
    fake.failNext('chat.postMessage', { error: 'account_inactive' }, 3);
    model.enqueue({ text: 'Nobody will read this.' });
    await mention(teamD, 'hello?');
    await app.settle();
    const stateOf = async () => {
      const response = await fetch(`${app.url}/api/v1/installations`, {
        headers: { authorization: `Bearer ${adminKey}` },
      });
      const { items } = (await response.json()) as { items: Array<{ workspace: string; state: string }> };
      return items.find((item) => item.workspace === teamD.teamId)?.state;
    };
    await waitForAsync(async () => (await stateOf()) === 'refusing its token' || undefined);
    // Removing the app still reaches Butler: the token is deleted and the workspace's tasks pause.
    const revoked = envelope(
      { type: 'tokens_revoked', tokens: { oauth: [], bot: [teamD.botUserId] }, event_ts: freshTs() },
      { team_id: teamD.teamId, context_team_id: teamD.teamId, authorizations: undefined },
    );
    expect((await postToSlack(slackUrl, asJson(revoked))).status).toBe(200);
    expect(await stateOf()).toBe('uninstalled');
  });

  it('tries a failed token refresh again after a short back-off, answering with the current token meanwhile', async () => {
    const teamF: FakeWorkspaceInstall = { ...teamA, teamId: 'T0FFFFFFF', rotating: { expiresIn: 60 } };
    await install(teamF);
    const first = fake.oauth.tokenOf(teamF.teamId);
    fake.failNext('oauth.v2.access', { status: 500 });
    model.enqueue({ text: 'Hi.' });
    expect((await mention(teamF, 'hello')).status).toBe(200);
    await app.settle();
    expect(model.requests).toHaveLength(1);
    expect(tokensUsed()).toContain(first);
    // After the back-off (5 s) the next delivery refreshes; the workspace was never marked.
    await new Promise((resolve) => setTimeout(resolve, 5_500));
    model.enqueue({ text: 'Hi again.' });
    await mention(teamF, 'again');
    await app.settle();
    await waitForAsync(async () => fake.oauth.tokenOf(teamF.teamId) !== first || undefined);
    const readiness = (await (await fetch(`${app.url}/readyz`)).json()) as { checks: Record<string, string> };
    expect(readiness.checks.slack).not.toContain('refusing');
  });
});

describe.runIf(testDatabaseUrl)('Slack installs over OAuth, two processes on one database', () => {
  it('rotates a token once however many processes need it at the same moment', async () => {
    const second = await startInstallingButler(app.databaseUrl);
    try {
      const teamS: FakeWorkspaceInstall = { ...teamB, teamId: 'T0SHARED0', rotating: { expiresIn: 0 } };
      expect((await install(teamS)).status).toBe(200);
      const before = fake.oauth.refreshes.length;
      model.setFallback({ text: 'Hi.' });
      // Both processes take a mention of the workspace at once: each needs a fresh token.
      await Promise.all(
        [app, second].map((target) => mentionAt(`${target.url}/slack/events`, teamS, 'hello')),
      );
      await Promise.all([app.settle(), second.settle()]);
      expect(fake.oauth.refreshes.length - before).toBe(1);
      // Both mentions reach the model, whichever process's worker answers each.
      await waitForAsync(async () => model.requests.length >= 2 || undefined, 10_000);
    } finally {
      await second.close();
    }
  });
});
