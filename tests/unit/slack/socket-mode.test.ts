import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PlatformConnector } from '../../../src/adapters/connector.js';
import { createSlackConnector } from '../../../src/adapters/slack/index.js';
import { fileConfigSchema } from '../../../src/config/file.js';
import { type CoreIntake, startCoreIntake } from '../../helpers/core-intake.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { recordingLogger } from '../../helpers/recording-logger.js';
import { waitFor } from '../../helpers/wait-for.js';
import { type FakeSocketMode, startFakeSocketMode } from './fake-socket-mode.js';
import { appMention, blockActions, envelope, team } from './payloads.js';

let core: CoreIntake;
let socket: FakeSocketMode;
let fake: FakeSlackApi;
let connector: PlatformConnector;
let log: ReturnType<typeof recordingLogger>;

beforeAll(async () => {
  core = await startCoreIntake({ approvers: { slack: ['U0APPROVER'] } });
});
afterAll(() => core.close());

beforeEach(async () => {
  await core.reset();
  socket = await startFakeSocketMode();
  fake = await startFakeSlackApi({ socketUrl: () => socket.url });
  log = recordingLogger();
  connector = createSlackConnector({
    config: {
      botToken: 'xoxb-test',
      signingSecret: undefined,
      appToken: 'xapp-test',
      apiUrl: fake.url,
      install: undefined,
    },
    file: fileConfigSchema.parse({}),
    intake: core.intake,
    logger: log.logger,
    tuning: { apiRetries: 0 },
  });
});

afterEach(async () => {
  await connector.stop().catch(() => {});
  await socket.close();
  await fake.close();
});

let envelopeCounter = 0;
function eventsApi(payload: Record<string, unknown>, retryAttempt = 0) {
  envelopeCounter += 1;
  return {
    envelope_id: `env-${envelopeCounter}`,
    type: 'events_api',
    payload,
    accepts_response_payload: false,
    retry_attempt: retryAttempt,
    retry_reason: retryAttempt > 0 ? 'timeout' : '',
  };
}

describe('Slack over Socket Mode', () => {
  it('mounts no HTTP route and connects with the app token', async () => {
    expect(connector.routes.size).toBe(0);
    expect(connector.readiness()).toBe('not started');
    await connector.start();
    await socket.waitForConnection();
    const open = fake.callsTo('apps.connections.open')[0];
    expect(open?.token).toBe('xapp-test');
    expect(fake.callsTo('auth.test')[0]?.token).toBe('xoxb-test');
    await fake.waitFor(() => connector.readiness() === 'ok');
  });

  it('acknowledges an event only after the core stored it', async () => {
    await connector.start();
    await socket.waitForConnection();
    const lock = await core.holdInbox();
    const sent = eventsApi(envelope(appMention({ ts: '1700000000.000100' })));
    socket.send(sent);
    // While the database makes the insert wait, Slack gets no acknowledgement.
    await delay(300);
    expect(socket.acks).toEqual([]);
    await lock.release();
    await fake.waitFor(() => socket.acks.length === 1);
    expect(socket.acks[0]?.envelope_id).toBe(sent.envelope_id);
    const stored = await core.storedMessages();
    expect(stored.map((message) => message.address.thread)).toEqual(['1700000000.000100']);
  });

  it('leaves an envelope unacknowledged when the core cannot store it (Slack redelivers)', async () => {
    await connector.start();
    await socket.waitForConnection();
    const restore = await core.refuseInboxWrites();
    socket.send(eventsApi(envelope(appMention({ ts: '1700000000.000200' }))));
    // Writes come back only once the core refused this one, however long reaching the insert takes.
    await waitFor(() => log.lines.some((line) => String(line.message).includes('not accepted')), 10_000);
    await restore();
    expect(socket.acks).toEqual([]);
    expect(await core.storedMessages()).toEqual([]);
    const redelivered = eventsApi(envelope(appMention({ ts: '1700000000.000200' })), 1);
    socket.send(redelivered);
    await fake.waitFor(() => socket.acks.length === 1);
    expect(socket.acks.map((ack) => ack.envelope_id)).toEqual([redelivered.envelope_id]);
    expect(await core.storedMessages()).toHaveLength(1);
  });

  it('acknowledges a click only once its decision is stored', async () => {
    await connector.start();
    await socket.waitForConnection();
    const address = { platform: 'slack' as const, workspace: team, channel: 'C0GENERAL', thread: 'main' };
    const approval = await core.pendingApproval({ platform: 'slack', requester: { id: 'U0ALICE' }, address });
    // While the database makes the decision wait, the envelope stays unacknowledged.
    const lock = await core.holdApproval(approval.id);
    socket.send({
      envelope_id: 'env-click',
      type: 'interactive',
      payload: blockActions({
        approvalId: approval.id,
        actionId: 'butler_approve',
        messageTs: '1700000000.000900',
      }),
      accepts_response_payload: false,
    });
    await delay(300);
    expect(socket.acks).toEqual([]);
    await lock.release();
    await fake.waitFor(() => socket.acks.length === 1);
    await fake.waitFor(() => fake.callsTo('chat.update')[0]);
    expect(await core.approval(approval.id)).toMatchObject({
      status: 'approved',
      decidedBy: { id: 'U0APPROVER', name: 'approver' },
    });
  });
});
