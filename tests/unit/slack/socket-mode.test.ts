import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PlatformConnector } from '../../../src/adapters/connector.js';
import { createSlackConnector } from '../../../src/adapters/slack/index.js';
import { fileConfigSchema } from '../../../src/config/file.js';
import { silentLogger } from '../../../src/core/logger.js';
import { type FakeSlackApi, startFakeSlackApi } from '../../helpers/fake-slack-api.js';
import { createFakeIntake, type FakeIntake } from './fake-intake.js';
import { type FakeSocketMode, startFakeSocketMode } from './fake-socket-mode.js';
import { appMention, blockActions, envelope } from './payloads.js';

let socket: FakeSocketMode;
let fake: FakeSlackApi;
let intake: FakeIntake;
let connector: PlatformConnector;

beforeEach(async () => {
  socket = await startFakeSocketMode();
  fake = await startFakeSlackApi({ socketUrl: () => socket.url });
  intake = createFakeIntake();
  connector = createSlackConnector({
    config: { botToken: 'xoxb-test', signingSecret: undefined, appToken: 'xapp-test', apiUrl: fake.url },
    file: fileConfigSchema.parse({}),
    intake,
    logger: silentLogger,
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

  it('acknowledges an event only after the core accepted it', async () => {
    await connector.start();
    await socket.waitForConnection();
    intake.acceptDelayMs = 200;
    const sent = eventsApi(envelope(appMention({ ts: '1700000000.000100' })));
    socket.send(sent);
    await fake.waitFor(() => intake.calls.includes('accept'));
    expect(socket.acks).toEqual([]);
    await fake.waitFor(() => socket.acks.length === 1);
    expect(socket.acks[0]?.envelope_id).toBe(sent.envelope_id);
    expect(intake.accepted[0]?.address.thread).toBe('1700000000.000100');
  });

  it('leaves an envelope unacknowledged when the core cannot store it (Slack redelivers)', async () => {
    await connector.start();
    await socket.waitForConnection();
    intake.acceptError = new Error('database unavailable');
    socket.send(eventsApi(envelope(appMention({ ts: '1700000000.000200' }))));
    await fake.waitFor(() => intake.calls.includes('accept'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(socket.acks).toEqual([]);
    intake.acceptError = undefined;
    const redelivered = eventsApi(envelope(appMention({ ts: '1700000000.000200' })), 1);
    socket.send(redelivered);
    await fake.waitFor(() => socket.acks.length === 1);
    expect(intake.accepted).toHaveLength(1);
  });

  it('acknowledges clicks at once and then decides', async () => {
    await connector.start();
    await socket.waitForConnection();
    intake.decideDelayMs = 1000;
    socket.send({
      envelope_id: 'env-click',
      type: 'interactive',
      payload: blockActions({
        approvalId: 'ap-9',
        actionId: 'butler_approve',
        messageTs: '1700000000.000900',
      }),
      accepts_response_payload: false,
    });
    await fake.waitFor(() => socket.acks.length === 1);
    expect(intake.decisions).toEqual([]);
    await fake.waitFor(() => fake.callsTo('chat.update')[0]);
    expect(intake.decisions[0]).toMatchObject({ approvalId: 'ap-9', decision: 'approve' });
  });
});
