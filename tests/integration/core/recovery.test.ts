import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeConversationKey } from '../../../src/core/contracts/conversation-key.js';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import { openDatabase } from '../../../src/storage/database.js';
import { inboundEvents } from '../../../src/storage/schema.js';
import { createStore } from '../../../src/storage/store.js';
import { startTestButler } from '../../helpers/butler-app.js';
import {
  type ButlerChild,
  isReady,
  isStopped,
  isType,
  killButlerChildren,
  startButlerChild,
} from '../../helpers/butler-child.js';
import {
  createPostgresDatabase,
  databaseEnv,
  databaseKind,
  dropPostgresDatabase,
  testDatabaseUrl,
} from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';

let model: FakeModelServer;
beforeAll(async () => {
  model = await startFakeModelServer();
});
afterAll(() => model.close());

describe(`crash recovery on ${databaseKind}`, () => {
  it('answers a message exactly once when the process is killed mid-reply', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'butler-crash-'));
    const configPath = join(directory, 'butler.config.json');
    writeFileSync(
      configPath,
      JSON.stringify({ worker: { leaseSeconds: 4, pollMilliseconds: 20, sweepMilliseconds: 200 } }),
    );
    const databaseUrl = testDatabaseUrl ? await createPostgresDatabase() : undefined;
    const children: ButlerChild[] = [];
    const env = {
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'test-model',
      BUTLER_CONFIG: configPath,
      LOG_LEVEL: 'warn',
      ...(databaseUrl ? databaseEnv(databaseUrl) : { BUTLER_DATA_DIR: join(directory, 'data') }),
    };
    try {
      const words = Array.from({ length: 20 }, (_, index) => `word${index} `);
      model.enqueue(
        { text: words.join(''), chunks: words, chunkDelayMs: 200 },
        { text: 'Recovered answer.' },
      );
      const message = inboundMessage({ text: 'tell me a long story' });

      const first = startButlerChild(env);
      children.push(first);
      await first.waitFor(isReady);
      first.send(JSON.stringify(message));
      const created = await first.waitFor(isType('created'));
      await first.waitFor(isType('append'));
      first.child.kill('SIGKILL');
      await first.exited;
      expect(first.lines.some(isType('finish'))).toBe(false);

      const second = startButlerChild(env);
      children.push(second);
      const finished = await second.waitFor(isType('finish'));
      expect(finished).toMatchObject({ messageId: created.messageId, text: 'Recovered answer.' });
      expect(second.lines.filter(isType('created'))).toHaveLength(0);
      second.send('stop');
      await second.waitFor(isStopped);
      await second.exited;
      expect(model.requests).toHaveLength(2);

      const database = await openDatabase({
        url: databaseUrl,
        dataDir: join(directory, 'data'),
        logger: silentLogger,
      });
      try {
        const store = createStore(database.db);
        const [event] = await database.db
          .select()
          .from(inboundEvents)
          .where(eq(inboundEvents.dedupKey, message.dedupKey));
        expect(event).toMatchObject({ status: 'done', attempts: 2 });
        const conversation = await store.conversations.find(encodeConversationKey(message.address));
        const window = await store.conversations.window(conversation?.id ?? '');
        expect(window.map((entry) => [entry.role, entry.content])).toEqual([
          ['user', 'tell me a long story'],
          ['assistant', 'Recovered answer.'],
        ]);
        expect(conversation?.inflight).toBeNull();
      } finally {
        await database.close();
      }
    } finally {
      await killButlerChildren(children);
      if (databaseUrl) await dropPostgresDatabase(databaseUrl);
      rmSync(directory, { recursive: true, force: true });
    }
  }, 60_000);

  it('commits a reply that was delivered just before a crash without asking the model again', async () => {
    const platform = new RecordingAdapter();
    const app = await startTestButler({
      env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model' },
      adapters: [platform],
    });
    try {
      model.reset();
      await app.butler.worker.stop(1_000);
      const { store } = app.butler;
      const message = inboundMessage({ text: 'what did you say?' });
      await app.butler.service.accept(message);
      const claim = await store.inbox.claimNext('crashed-worker', 1);
      const conversation = await store.conversations.ensure(
        encodeConversationKey(message.address),
        message.address,
      );
      await store.conversations.setInflight(conversation.id, {
        turnId: 'turn-before-crash',
        eventIds: claim?.events.map((event) => event.id) ?? [],
        replyMessageIds: ['posted-1'],
        delivered: {
          text: 'The answer you already saw.',
          messages: [
            { role: 'user', content: 'what did you say?' },
            { role: 'assistant', content: 'The answer you already saw.' },
          ],
        },
      });
      app.butler.worker.start();
      await app.settle();

      expect(model.requests).toHaveLength(0);
      expect(platform.replies).toHaveLength(1);
      expect(platform.replies[0]).toMatchObject({
        resume: ['posted-1'],
        finalText: 'The answer you already saw.',
      });
      const window = await store.conversations.window(conversation.id);
      expect(window.map((entry) => entry.content)).toEqual([
        'what did you say?',
        'The answer you already saw.',
      ]);
    } finally {
      await app.close();
    }
  });
});
