import type { ChatAdapter, ReplyTarget } from '../contracts/adapter.js';
import { errorText } from '../contracts/errors.js';
import type { FileOrigin } from '../contracts/file-records.js';
import type { FileBytes } from '../contracts/files.js';
import type { Logger } from '../contracts/logger.js';
import type { Store } from '../contracts/store.js';
import { formatBytes } from '../text/index.js';
import type { FileIntake } from './file-intake.js';

/**
 * Sends the files a tool or the model produced into the conversation, once: each is stored under
 * `call:<tool call id>:<n>` (stable across retries and restarts) and marked when sent, so a retried call
 * neither stores nor sends it twice. The model is told what was sent, never given the bytes.
 */

export interface ProducedFiles {
  /** The call within its turn (`<turn's first inbox event>:<provider's call id>`): its files are stored once. */
  callId: string;
  origin: FileOrigin;
  files: readonly FileBytes[];
}

export interface DeliveryPlace {
  adapter: ChatAdapter;
  target: ReplyTarget;
  conversationKey: string;
  /** Where a platform without uploads links to the file (`GET /api/v1/files/{id}`); absent: no link. */
  publicUrl?: string;
  logger: Logger;
}

export class FileDelivery {
  constructor(
    private readonly intake: FileIntake,
    private readonly store: Store,
  ) {}

  /** Stores and sends each file; returns one line per file for the model. Never throws for one file. */
  async deliver(place: DeliveryPlace, produced: ProducedFiles): Promise<string[]> {
    const lines: string[] = [];
    for (const [index, file] of produced.files.entries()) {
      lines.push(await this.deliverOne(place, produced, file, index));
    }
    return lines;
  }

  private async deliverOne(
    place: DeliveryPlace,
    produced: ProducedFiles,
    file: FileBytes,
    index: number,
  ): Promise<string> {
    const { adapter, target } = place;
    const what = `${file.name} (${file.mimeType}, ${formatBytes(file.bytes.byteLength)})`;
    try {
      const stored = await this.intake.save({
        conversationKey: place.conversationKey,
        platform: adapter.platform,
        key: `call:${place.conversationKey}:${produced.callId}:${index}`,
        origin: produced.origin,
        uploader: null,
        file,
      });
      if (stored.deliveredAs) return `[file ${stored.id} already sent to the conversation: ${what}]`;
      if (!adapter.sendFile) {
        const link = place.publicUrl ? ` at ${place.publicUrl}/api/v1/files/${stored.id}` : '';
        return `[file ${stored.id} stored${link}; this conversation cannot receive files: ${what}]`;
      }
      const sent = await adapter.sendFile(target, { ...file, id: stored.id });
      await this.store.files.markDelivered(stored.id, sent);
      return `[file ${stored.id} sent to the conversation: ${what}]`;
    } catch (error) {
      place.logger.warn({ err: error, file: file.name }, 'could not send a file');
      return `[file not sent: ${what}: ${errorText(error)}]`;
    }
  }
}
