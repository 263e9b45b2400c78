import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ChatUser, ConversationAddress } from '../../../src/core/contracts/events.js';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';
import { latch } from '../../helpers/wait-for.js';

/**
 * A turn's requesters are people: when a run of the task Olga's API key made and her own terminal message
 * fold into one turn, one person asked, and a medium-risk call is hers to confirm, as when she asks alone.
 */

let model: FakeModelServer;
let toolServer: ToolServer;
let platform: RecordingAdapter;
let app: TestButler;

const olga: ChatUser = { id: 'olga', name: 'Olga' };
/** How a run of a task her key made asks in the terminal's conversation: as the key, on platform api. */
const olgaKey: ChatUser = { id: 'olga-key', name: 'olga-key', platform: 'api' };

beforeAll(async () => {
  model = await startFakeModelServer();
  toolServer = await startToolServer();
  platform = new RecordingAdapter();
  app = await startTestButler({
    env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model' },
    config: {
      approvers: { console: ['pat'] },
      people: [{ name: 'olga', console: olga.id, api: olgaKey.id }],
      api: { keys: [{ name: olgaKey.id, key: 'olga-turns-key-0123456789abcdef', scopes: ['read'] }] },
      tools: [
        {
          name: 'scale_service',
          description: 'Scale a service.',
          risk: 'medium',
          input: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
          http: { method: 'POST', url: `${toolServer.url}/scale_service` },
        },
      ],
    },
    adapters: [platform],
  });
});
afterAll(async () => {
  await app.close();
  await model.close();
  await toolServer.close();
});
beforeEach(() => {
  model.reset();
  toolServer.requests.length = 0;
});

const address: ConversationAddress = {
  platform: 'console',
  workspace: 'local',
  channel: 'ops',
  thread: 'people',
};
const say = (user: ChatUser, text: string) =>
  app.butler.service.accept(inboundMessage({ text, address, user, isDirect: false }));

describe(`a turn's requesters on ${databaseKind}`, () => {
  it("counts one person's identities as one requester", async () => {
    // Pat is answered slowly; meanwhile the key's run and Olga's message arrive, and one turn answers both.
    const firstAnswer = latch();
    model.enqueue(
      async () => {
        await firstAnswer.opened;
        return { text: 'One moment.', chunks: ['One ', 'moment.'] };
      },
      { toolCalls: [{ id: 'call_scale', name: 'scale_service', arguments: '{"service":"search"}' }] },
    );
    await say({ id: 'pat', name: 'Pat' }, 'hello');
    await model.waitForRequests(1);
    await say(olgaKey, 'Scale search for the digest');
    await say(olga, 'and do it now');
    firstAnswer.open();
    await app.settle();

    const { card } = platform.lastCard();
    expect(card.requesters.map((requester) => requester.id)).toEqual([olga.id]);
    const [call] = card.calls;
    if (!call) throw new Error('no call on the card');
    expect(call.whoMayApprove).toBe('the requester or an approver');

    model.enqueue({ text: 'Scaled.' });
    expect(
      await app.butler.service.decide({
        approvalId: call.approvalId,
        platform: 'console',
        user: olga,
        decision: 'approve',
      }),
    ).toMatchObject({ ok: true });
    await app.settle();
    expect(toolServer.requests.map((request) => request.path)).toEqual(['/scale_service']);
  });
});
