import { type App, SocketModeReceiver } from '@slack/bolt';
import type { Logger } from '../../core/contracts/logger.js';
import { deliverToBolt } from './bolt-delivery.js';
import type { InstallationGate } from './installation-source.js';
import { isRecord } from './parse.js';
import { errorFields } from './slack-api.js';
import { toSlackSdkLogger } from './slack-logger.js';

export interface SlackSocketModeReceiverOptions {
  appToken: string;
  apiUrl: string;
  logger: Logger;
  gate: InstallationGate;
}

export type SocketState = 'disconnected' | 'connecting' | 'connected' | 'reconnecting';

/**
 * Bolt's Socket Mode receiver with Butler's acknowledgement rule: an events_api envelope is
 * acknowledged only after the listeners handed it to the core (Bolt acknowledges first). An
 * envelope that could not be stored is left unacknowledged, so Slack delivers it again.
 */
export class SlackSocketModeReceiver extends SocketModeReceiver {
  private boltApp: App | undefined;
  private readonly butlerLogger: Logger;
  private readonly gate: InstallationGate;
  state: SocketState = 'disconnected';

  constructor(options: SlackSocketModeReceiverOptions) {
    super({
      appToken: options.appToken,
      logger: toSlackSdkLogger(options.logger),
      installerOptions: { clientOptions: { slackApiUrl: options.apiUrl } },
    });
    this.butlerLogger = options.logger;
    this.gate = options.gate;
    this.client.removeAllListeners('slack_event');
    this.client.on('slack_event', (envelope: unknown) => {
      void this.onEnvelope(envelope);
    });
    this.client.on('connecting', () => this.setState('connecting'));
    this.client.on('connected', () => this.setState('connected'));
    this.client.on('reconnecting', () => this.setState('reconnecting'));
    this.client.on('disconnected', () => this.setState('disconnected'));
  }

  override init(app: App): void {
    super.init(app);
    this.boltApp = app;
  }

  private setState(state: SocketState): void {
    if (state === this.state) return;
    this.state = state;
    this.butlerLogger.info({ platform: 'slack', socketMode: state }, 'Socket Mode connection');
  }

  /** Exposed for tests: what the Socket Mode client emits for every envelope. */
  async onEnvelope(envelope: unknown): Promise<void> {
    const app = this.boltApp;
    if (!app || !isRecord(envelope) || !isRecord(envelope.body) || typeof envelope.ack !== 'function') return;
    const ack = envelope.ack as (response?: unknown) => Promise<void>;
    const body = envelope.body;
    // Unacknowledged (Slack redelivers) when the gate cannot tell, as when the database is down.
    const admitted = await this.gate.admits(body).catch((error: unknown) => {
      this.butlerLogger.error({ platform: 'slack', ...errorFields(error) }, 'Slack envelope not checked');
      return undefined;
    });
    if (admitted === undefined) return;
    if (!admitted) {
      await ack().catch(() => {});
      return;
    }
    const fields = {
      platform: 'slack',
      eventId: typeof body.event_id === 'string' ? body.event_id : undefined,
      envelopeId: typeof envelope.envelope_id === 'string' ? envelope.envelope_id : undefined,
    };
    await deliverToBolt(
      app,
      {
        body,
        retryNum: typeof envelope.retry_num === 'number' ? envelope.retry_num : undefined,
        retryReason: typeof envelope.retry_reason === 'string' ? envelope.retry_reason : undefined,
      },
      {
        acknowledge: (responseBody) => ack(responseBody),
        refuse: (error) => {
          this.butlerLogger.error(
            { ...fields, ...errorFields(error) },
            'Slack envelope not accepted; Slack will redeliver',
          );
        },
        failedAfterAck: (error) => {
          this.butlerLogger.error(
            { ...fields, ...errorFields(error) },
            'Slack interaction failed after its acknowledgement',
          );
        },
      },
    ).catch((error: unknown) => {
      this.butlerLogger.error({ ...fields, ...errorFields(error) }, 'could not acknowledge a Slack envelope');
    });
  }
}
