import type { ReceiverEvent } from '@slack/bolt';

/** The part of Bolt's App a receiver needs. */
export interface EventProcessor {
  processEvent(event: ReceiverEvent): Promise<void>;
}

export interface DeliveryTransport {
  /** Sends Slack its acknowledgement, with a response body for interactivity (`response_action`). */
  acknowledge(responseBody: unknown): Promise<void> | void;
  /** Processing failed before anything was acknowledged: let Slack redeliver. */
  refuse(error: unknown): Promise<void> | void;
  /** Processing failed after the acknowledgement (a click's follow-up work). */
  failedAfterAck(error: unknown): void;
}

export interface Delivery {
  body: Record<string, unknown>;
  retryNum?: number | undefined;
  retryReason?: string | undefined;
}

/**
 * Hands one Slack payload to Bolt and decides when Slack hears back. Bolt acknowledges Events API
 * payloads before its listeners run; Butler holds that acknowledgement until the listeners finish,
 * so an acknowledged event is always in the database. Interactivity is acknowledged when the
 * listener calls `ack()` (at once, before the decision work).
 */
export async function deliverToBolt(
  app: EventProcessor,
  delivery: Delivery,
  transport: DeliveryTransport,
): Promise<void> {
  const holdUntilProcessed = delivery.body.type === 'event_callback';
  let acknowledged = false;
  const acknowledge = async (responseBody?: unknown) => {
    if (acknowledged) return;
    acknowledged = true;
    await transport.acknowledge(responseBody);
  };
  const event: ReceiverEvent = {
    body: delivery.body,
    ack: async (responseBody?: unknown) => {
      if (!holdUntilProcessed) await acknowledge(responseBody);
    },
    ...(delivery.retryNum !== undefined ? { retryNum: delivery.retryNum } : {}),
    ...(delivery.retryReason !== undefined ? { retryReason: delivery.retryReason } : {}),
  };
  try {
    await app.processEvent(event);
  } catch (error) {
    if (acknowledged) transport.failedAfterAck(error);
    else await transport.refuse(error);
    return;
  }
  await acknowledge(undefined);
}
