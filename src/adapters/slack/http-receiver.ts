import type { IncomingMessage, ServerResponse } from 'node:http';
import type { App, Receiver } from '@slack/bolt';
import type { Logger } from '../../core/contracts/logger.js';
import { readBody } from '../../http/body.js';
import { type RouteHandler, sendJson } from '../../http/server.js';
import { deliverToBolt } from './bolt-delivery.js';
import type { InstallationGate } from './installation-source.js';
import { parseRetryNumber, parseSlackRequest } from './parse.js';
import { errorFields } from './slack-api.js';
import { verifySlackSignature } from './verify.js';

export interface SlackHttpReceiverOptions {
  signingSecret: string;
  logger: Logger;
  gate: InstallationGate;
  /** Milliseconds since the epoch; injected so tests can move the clock. */
  now: () => number;
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function answerEmpty(response: ServerResponse, status: number): void {
  if (response.headersSent) return;
  response.writeHead(status, { 'content-length': 0 });
  response.end();
}

/**
 * A Bolt receiver mounted on Butler's own HTTP server as `POST /slack/events` (events and
 * interactivity share it): raw body → signature and timestamp check → parse → Bolt. Bolt's
 * HTTPReceiver is not used: it accepts timestamps from the future and acknowledges events before
 * the core has stored them.
 */
export class SlackHttpReceiver implements Receiver {
  private app: App | undefined;
  private accepting = false;

  constructor(private readonly options: SlackHttpReceiverOptions) {}

  init(app: App): void {
    this.app = app;
  }

  async start(): Promise<void> {
    this.accepting = true;
  }

  async stop(): Promise<void> {
    this.accepting = false;
  }

  readonly route: RouteHandler = async (request, response) => {
    const app = this.app;
    if (!app || !this.accepting) {
      // Slack retries 5xx answers; the event is not lost while Butler starts.
      response.setHeader('retry-after', '5');
      sendJson(response, 503, { error: 'not_ready' });
      request.resume();
      return;
    }
    const rawBody = await readBody(request);
    verifySlackSignature({
      signingSecret: this.options.signingSecret,
      rawBody,
      signature: header(request, 'x-slack-signature'),
      timestamp: header(request, 'x-slack-request-timestamp'),
      nowSeconds: Math.floor(this.options.now() / 1000),
    });
    let parsed: ReturnType<typeof parseSlackRequest>;
    try {
      parsed = parseSlackRequest(rawBody, header(request, 'content-type'));
    } catch (error) {
      // Redelivering a malformed payload cannot help.
      response.setHeader('x-slack-no-retry', '1');
      throw error;
    }
    if (parsed.kind === 'url_verification') return sendJson(response, 200, { challenge: parsed.challenge });
    if (parsed.kind === 'ssl_check') return answerEmpty(response, 200);

    const { body } = parsed;
    if (body.type === 'app_rate_limited') {
      // Slack drops events beyond 30,000 per workspace per hour and says so here; Bolt has no listener for it.
      this.options.logger.warn(
        { platform: 'slack', workspace: body.team_id },
        'Slack is rate-limiting event deliveries',
      );
      return answerEmpty(response, 200);
    }
    if (!(await this.options.gate.admits(body))) return answerEmpty(response, 200);
    const retryNum = parseRetryNumber(request.headers['x-slack-retry-num']);
    const fields = {
      platform: 'slack',
      eventId: typeof body.event_id === 'string' ? body.event_id : undefined,
      payloadType: typeof body.type === 'string' ? body.type : undefined,
      retryNum,
    };
    await deliverToBolt(
      app,
      { body, retryNum, retryReason: header(request, 'x-slack-retry-reason') },
      {
        acknowledge: (responseBody) =>
          responseBody === undefined || responseBody === ''
            ? answerEmpty(response, 200)
            : sendJson(response, 200, responseBody),
        refuse: (error) => {
          this.options.logger.error(
            { ...fields, ...errorFields(error) },
            'Slack payload not accepted; Slack will retry',
          );
          sendJson(response, 500, { error: 'not_accepted' });
        },
        failedAfterAck: (error) => {
          this.options.logger.error(
            { ...fields, ...errorFields(error) },
            'Slack interaction failed after its acknowledgement',
          );
        },
      },
    );
  };
}
