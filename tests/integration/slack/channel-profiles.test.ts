import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { auditLog } from '../../../src/storage/schema.js';
import type { TestButler } from '../../helpers/butler-app.js';
import {
  type FakeModelServer,
  type RecordedRequest,
  startFakeModelServer,
} from '../../helpers/fake-model-server.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';
import {
  appMention,
  asForm,
  asJson,
  blockActions,
  envelope,
  postToSlack,
} from '../../unit/slack/payloads.js';
import { freshTs, startSlackButler } from './slack-butler.js';

/**
 * Channel profiles through the running Butler on Slack: #docs gets its persona, its tools only and its own
 * model endpoint; #ops its own approvers in place of everyone else's; #general keeps the defaults.
 */

let slack: FakeSlackApi;
let model: FakeModelServer;
let docsModel: FakeModelServer;
let tools: ToolServer;
let app: TestButler;
let slackUrl: string;

const docsToken = 'sk-docs-endpoint';
const adminKey = 'admin-key-for-channel-profiles';

beforeAll(async () => {
  slack = await startFakeSlackApi();
  model = await startFakeModelServer();
  docsModel = await startFakeModelServer();
  tools = await startToolServer();
  app = await startSlackButler(slack, model, tools, {
    env: { DOCS_MODEL_TOKEN: docsToken },
    config: {
      api: { keys: [{ name: 'admin', key: adminKey, scopes: ['read'] }] },
      agents: [
        { name: 'writer', description: 'Writes docs pages.', instructions: 'You write docs.' },
        { name: 'oncall', description: 'Handles incidents.', instructions: 'You handle incidents.' },
      ],
      channels: [
        {
          name: 'docs-desk',
          platform: 'slack',
          id: 'C0DOCS',
          instructions: 'You are the docs desk: answer from the handbook.',
          model: { name: 'docs-model', baseUrl: docsModel.baseUrl, apiToken: '$' + '{DOCS_MODEL_TOKEN}' },
          tools: ['restart_*'],
          agents: ['writer'],
          approvers: ['U0DOCSLEAD'],
        },
        {
          name: 'ops-desk',
          platform: 'slack',
          ids: ['C0OPS'],
          model: 'ops-model',
          approvers: ['U0OPSLEAD'],
          approversMode: 'replace',
          agents: [],
        },
      ],
    },
  });
  slackUrl = `${app.url}/slack/events`;
});
afterAll(async () => {
  await app?.close();
  await Promise.all([model.close(), docsModel.close(), tools.close(), slack.close()]);
});
beforeEach(() => {
  slack.reset();
  model.reset();
  docsModel.reset();
  tools.requests.length = 0;
});

const systemPrompt = (request: RecordedRequest | undefined) =>
  String(request?.messages.find((message) => message.role === 'system')?.content ?? '');
const offered = (request: RecordedRequest | undefined) =>
  (request?.tools ?? []).map((tool) => (tool.function as { name: string }).name);
/** The agents the request's `delegate` tool names. */
const delegates = (request: RecordedRequest | undefined) => {
  const delegate = request?.tools?.find((tool) => (tool.function as { name: string }).name === 'delegate');
  const parameters = (delegate?.function as { parameters?: { properties?: { agent?: { enum?: string[] } } } })
    ?.parameters;
  return parameters?.properties?.agent?.enum;
};

async function mention(channel: string, text: string): Promise<string> {
  const ts = freshTs();
  await postToSlack(slackUrl, asJson(envelope(appMention({ channel, ts, text: `<@U0BUTLER> ${text}` }))));
  await app.settle();
  return ts;
}

/** Asks for a restart in `channel`; returns what a click on the card needs. */
async function requestRestart(server: FakeModelServer, channel: string) {
  server.enqueue({
    toolCalls: [{ id: `call_${freshTs()}`, name: 'restart_service', arguments: '{"service":"docs-site"}' }],
  });
  const threadTs = await mention(channel, 'restart docs-site');
  const card = slack
    .callsTo('chat.postMessage')
    .filter(
      (call) =>
        call.args.channel === channel && JSON.stringify(call.args.blocks ?? '').includes('butler_approve'),
    )
    .at(-1);
  const blocks = card?.args.blocks as
    | Array<{ type: string; elements?: Array<{ value?: string }> }>
    | undefined;
  const approvalId = blocks?.find((block) => block.type === 'actions')?.elements?.[0]?.value;
  const cardTs = [...slack.messages.values()].find((message) => message.blocks === card?.args.blocks)?.ts;
  if (!approvalId || !cardTs) throw new Error(`no approval card in ${channel}`);
  return { channel, threadTs, cardTs, approvalId };
}

async function click(
  card: Awaited<ReturnType<typeof requestRestart>>,
  user: { id: string; name: string },
  server: FakeModelServer,
) {
  server.enqueue({ text: 'Done.' });
  await postToSlack(
    slackUrl,
    asForm(
      blockActions({
        approvalId: card.approvalId,
        actionId: 'butler_approve',
        messageTs: card.cardTs,
        threadTs: card.threadTs,
        channel: card.channel,
        user,
      }),
    ),
  );
  await app.settle();
}

const docsLead = { id: 'U0DOCSLEAD', name: 'dora' };
const opsLead = { id: 'U0OPSLEAD', name: 'otto' };
const approver = { id: 'U0APPROVER', name: 'olga' };

describe('channel profiles on Slack', () => {
  it("gives #docs its instructions, only its tools and its own model endpoint; #general keeps Butler's", async () => {
    docsModel.enqueue({ text: 'See the handbook.' });
    await mention('C0DOCS', 'where are the docs?');
    const [docsRequest] = docsModel.requests;
    expect(docsRequest?.model).toBe('docs-model');
    expect(docsRequest?.headers.authorization).toBe(`Bearer ${docsToken}`);
    expect(systemPrompt(docsRequest)).toContain('You are the docs desk: answer from the handbook.');
    expect(offered(docsRequest)).toEqual(['restart_service', 'delegate']);
    expect(delegates(docsRequest)).toEqual(['writer']);
    expect(model.requests).toHaveLength(0);

    model.enqueue({ text: 'Hello.' });
    await mention('C0GENERAL', 'hello');
    const [general] = model.requests;
    expect(general?.model).toBe('test-model');
    expect(systemPrompt(general)).not.toContain('docs desk');
    expect(offered(general)).toEqual(
      expect.arrayContaining(['restart_service', 'scale_service', 'remember']),
    );
    expect(docsModel.requests).toHaveLength(1);
  });

  it('refuses a call to a tool outside the profile, audited with the profile, and runs nothing', async () => {
    const callId = `call_outside_${freshTs()}`;
    docsModel.enqueue(
      { toolCalls: [{ id: callId, name: 'scale_service', arguments: '{"service":"docs-site"}' }] },
      { text: 'I cannot scale services here.' },
    );
    await mention('C0DOCS', 'scale docs-site');
    expect(tools.requests).toHaveLength(0);
    const toolResult = docsModel.requests[1]?.messages.find((message) => message.role === 'tool');
    expect(String(toolResult?.content)).toContain('unknown tool "scale_service"');
    const [row] = await app.butler.database.db.select().from(auditLog).where(eq(auditLog.toolCallId, callId));
    expect(row).toMatchObject({ decision: 'invalid', outcome: 'not_run', profile: 'docs-desk' });
    expect(
      slack
        .callsTo('chat.postMessage')
        .some((call) => JSON.stringify(call.args.blocks ?? '').includes('butler_approve')),
    ).toBe(false);
  });

  it("lets a profile's approvers decide beside the platform's (add), and not in other channels", async () => {
    const docsCard = await requestRestart(docsModel, 'C0DOCS');
    await click(docsCard, docsLead, docsModel);
    expect(tools.requests).toHaveLength(1);
    const [row] = await app.butler.database.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.approvalId, docsCard.approvalId));
    expect(row).toMatchObject({ decision: 'approved', decidedBy: docsLead.id, profile: 'docs-desk' });

    const secondDocsCard = await requestRestart(docsModel, 'C0DOCS');
    await click(secondDocsCard, approver, docsModel);
    expect(tools.requests).toHaveLength(2);

    const generalCard = await requestRestart(model, 'C0GENERAL');
    await click(generalCard, docsLead, model);
    const refused = await slack.waitFor(() => slack.callsTo('chat.postEphemeral')[0]);
    expect(refused.args.text).toBe('You are not allowed to decide this request.');
    expect(tools.requests).toHaveLength(2);
  });

  it("puts a profile's approvers in place of the platform's (replace), on a model name of Butler's endpoint", async () => {
    const opsCard = await requestRestart(model, 'C0OPS');
    expect(model.requests[0]?.model).toBe('ops-model');
    expect(offered(model.requests[0])).not.toContain('delegate');
    const card = slack
      .callsTo('chat.postMessage')
      .find((call) => call.args.channel === 'C0OPS' && call.args.blocks);
    expect(JSON.stringify(card?.args.blocks)).toContain('<@U0OPSLEAD>');
    expect(JSON.stringify(card?.args.blocks)).not.toContain('<@U0APPROVER>');

    await click(opsCard, approver, model);
    const refused = await slack.waitFor(() => slack.callsTo('chat.postEphemeral')[0]);
    expect(refused.args.text).toBe('You are not allowed to decide this request.');
    expect(tools.requests).toHaveLength(0);
    await click(opsCard, opsLead, model);
    expect(tools.requests).toHaveLength(1);
  });

  it('shows in the console read model which profile a conversation uses', async () => {
    docsModel.enqueue({ text: 'Hi from docs.' });
    await mention('C0DOCS', 'hi');
    const response = await fetch(`${app.url}/api/v1/conversations?limit=50`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    const page = (await response.json()) as {
      items: Array<{ key: string; address: { channel: string }; profile: string | null }>;
    };
    const docs = page.items.find((item) => item.address.channel === 'C0DOCS');
    expect(docs?.profile).toBe('docs-desk');
    expect(page.items.find((item) => item.address.channel === 'C0GENERAL')?.profile).toBeNull();

    const detail = await fetch(`${app.url}/api/v1/conversations/${encodeURIComponent(docs?.key ?? '')}`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    expect(((await detail.json()) as { profile: string | null }).profile).toBe('docs-desk');
  });
});
