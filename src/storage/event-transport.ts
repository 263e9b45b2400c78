import type postgres from 'postgres';
import type { Logger } from '../core/contracts/logger.js';

/** The one channel Butler's live events go out on. */
export const eventChannel = 'butler_events';

/**
 * How payloads travel: `send` resolves once the payload is out (rejects when it could not go);
 * `listen` starts delivery to `receive` and never rejects.
 */
export interface EventTransport {
  send(payload: string): Promise<void>;
  listen(receive: (payload: string) => void): Promise<void>;
  stop(): Promise<void>;
}

export function postgresTransport(client: postgres.Sql, logger: Logger): EventTransport {
  let unlisten: (() => Promise<void>) | undefined;
  /** After the first LISTEN (or a failed one), a later `onlisten` means the stream came back. */
  let comingBack = false;
  return {
    async send(payload) {
      await client.notify(eventChannel, payload);
    },
    async listen(receive) {
      // `onlisten` runs on the first LISTEN and after every reconnect; notifications in between are lost.
      const onListen = () => {
        if (comingBack) logger.info('listening for events again');
        comingBack = true;
      };
      try {
        const meta = await client.listen(eventChannel, receive, onListen);
        unlisten = () => meta.unlisten();
      } catch (error) {
        // postgres.js keeps reconnecting and listens once the database is back (`onListen` logs it).
        comingBack = true;
        logger.warn({ err: error }, 'listening for events failed; retrying in the background');
      }
    },
    async stop() {
      await unlisten?.();
    },
  };
}

export function localTransport(): EventTransport {
  let receiver: ((payload: string) => void) | undefined;
  return {
    async send(payload) {
      receiver?.(payload);
    },
    async listen(receive) {
      receiver = receive;
    },
    async stop() {
      receiver = undefined;
    },
  };
}
