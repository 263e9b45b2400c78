import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFeishuConnector } from '../../../src/adapters/feishu/index.js';
import { connectionReadiness, nextConnectionState } from '../../../src/adapters/feishu/long-connection.js';
import { fileConfigSchema } from '../../../src/config/file.js';
import type { Logger } from '../../../src/core/contracts/logger.js';
import { type CoreIntake, startCoreIntake } from '../../helpers/core-intake.js';
import { FakeFeishuApi } from '../../helpers/fake-feishu-api.js';
import { waitFor } from '../../helpers/wait-for.js';
import { FakeLongConnection } from './fake-long-connection.js';
import {
  aliceOpenId,
  bobOpenId,
  cardActionEvent,
  messageEvent,
  testAppId,
  testAppSecret,
} from './feishu-events.js';

/** Records the long connection's state changes, which it logs as `{from, to}`. */
function transitionRecorder() {
  const transitions: string[] = [];
  const record = (fields: unknown) => {
    const { from, to } = (typeof fields === 'object' && fields !== null ? fields : {}) as {
      from?: string;
      to?: string;
    };
    if (from && to) transitions.push(`${from}->${to}`);
  };
  const logger: Logger = { error: record, warn: record, info: record, debug: record, child: () => logger };
  return { transitions, logger };
}

describe('long-connection readiness', () => {
  it('follows the SDK callbacks, and a stopped connection stays stopped', () => {
    let state = nextConnectionState('idle', 'start');
    expect(connectionReadiness(state, undefined)).toBe('Feishu long connection connecting');
    state = nextConnectionState(state, 'ready');
    expect(connectionReadiness(state, undefined)).toBe('ok');
    state = nextConnectionState(state, 'reconnecting');
    expect(connectionReadiness(state, undefined)).toBe('Feishu long connection reconnecting');
    state = nextConnectionState(state, 'reconnected');
    expect(state).toBe('connected');
    expect(connectionReadiness(nextConnectionState(state, 'error'), 'exhausted')).toBe(
      'Feishu long connection failed: exhausted',
    );
    expect(nextConnectionState(nextConnectionState(state, 'stop'), 'reconnecting')).toBe('stopped');
  });
});

describe('Feishu over the long connection (real WSClient, fake gateway)', () => {
  let fake: FakeFeishuApi;
  let gateway: FakeLongConnection;
  let core: CoreIntake;
  let connector: ReturnType<typeof createFeishuConnector>;
  const recorder = transitionRecorder();

  beforeAll(async () => {
    core = await startCoreIntake({ approvers: { feishu: [bobOpenId] } });
    fake = await FakeFeishuApi.start();
    gateway = new FakeLongConnection(fake);
    connector = createFeishuConnector({
      apps: [
        {
          appId: testAppId,
          appSecret: testAppSecret,
          encryptKey: undefined,
          verificationToken: undefined,
          baseUrl: fake.baseUrl,
          connection: 'websocket',
          type: 'self_built',
        },
      ],
      file: fileConfigSchema.parse({}),
      intake: core.intake,
      logger: recorder.logger,
    });
  });
  afterAll(async () => {
    await connector.stop();
    gateway.close();
    await fake.close();
    await core.close();
  });

  it('mounts no HTTP routes and becomes ready once connected', async () => {
    expect(connector.routes.size).toBe(0);
    await connector.start();
    await waitFor(() => connector.readiness() === 'ok');
    expect(gateway.endpointCalls).toBe(1);
  });

  it('delivers message events to the intake and acknowledges them', async () => {
    const answer = await gateway.push(messageEvent({ messageId: 'om_ws1', text: '@_user_1 via websocket' }));
    expect(answer.code).toBe(200);
    expect((await core.storedMessages()).at(-1)).toMatchObject({
      messageId: 'om_ws1',
      text: 'via websocket',
    });
  });

  it('answers card callbacks with the toast in the response frame, deciding as the clicking user', async () => {
    const approval = await core.pendingApproval({ platform: 'feishu', requester: { id: aliceOpenId } });
    const click = (operatorOpenId: string) =>
      gateway.push(
        cardActionEvent({ operatorOpenId, value: { approval_id: approval.id, decision: 'approve' } }),
      );
    const refused = await click(aliceOpenId);
    expect(refused.data).toEqual({
      toast: {
        type: 'error',
        content: 'High-risk actions need an approver other than the person who asked.',
      },
    });
    const approved = await click(bobOpenId);
    expect(approved.data).toMatchObject({ toast: { type: 'success' }, card: { type: 'raw' } });
    expect(await core.approval(approval.id)).toMatchObject({
      status: 'approved',
      decidedBy: { id: bobOpenId },
    });
  });

  it('reports reconnecting when the connection drops and recovers by itself', async () => {
    gateway.current?.terminate();
    await waitFor(() => gateway.sockets.length === 2 && connector.readiness() === 'ok');
    expect(recorder.transitions).toEqual([
      'idle->connecting',
      'connecting->connected',
      'connected->reconnecting',
      'reconnecting->connected',
    ]);
    const answer = await gateway.push(messageEvent({ messageId: 'om_ws2' }));
    expect(answer.code).toBe(200);
    expect((await core.storedMessages()).at(-1)?.messageId).toBe('om_ws2');
  });

  it('reports stopped after stop', async () => {
    await connector.stop();
    expect(connector.readiness()).toBe('Feishu long connection stopped');
  });
});
