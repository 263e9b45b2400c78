import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChat } from '../../helpers/chat-process.js';
import {
  createPostgresDatabase,
  databaseEnv,
  dropPostgresDatabase,
  testDatabaseUrl,
} from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { start2025QuestionsHttpServer } from '../../helpers/mcp-2025-questions-server.js';
import { start2026HttpServer } from '../../helpers/mcp-2026-server.js';

/**
 * An MCP server's question in `npm run chat`: asked field by field at the prompt, checked, answered once. A
 * 2026-07-28 server's turn parks and its call is made again with the answer; a 2025-11-25 server's call waits
 * open for it, and the same turn goes on.
 */

let model: FakeModelServer;
let shop2026: Awaited<ReturnType<typeof start2026HttpServer>>;
let shop2025: Awaited<ReturnType<typeof start2025QuestionsHttpServer>>;
beforeAll(async () => {
  model = await startFakeModelServer();
  shop2026 = await start2026HttpServer();
  shop2025 = await start2025QuestionsHttpServer();
});
afterAll(async () => {
  await shop2026.close();
  await shop2025.close();
  await model.close();
});

/** Asks for a mug to be shipped through the server at `url`, and answers its form at the prompt. */
async function shipAtThePrompt(url: string): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'butler-chat-'));
  const databaseUrl = testDatabaseUrl ? await createPostgresDatabase() : undefined;
  writeFileSync(
    join(dataDir, 'butler.config.json'),
    JSON.stringify({ mcpServers: [{ name: 'shop', url, tools: { risk: { ship: 'low' } } }] }),
  );
  model.reset();
  model.enqueue(
    { toolCalls: [{ id: 'call_ship', name: 'shop__ship', arguments: '{"item":"mug"}' }] },
    { text: 'Your mug is on its way.' },
  );
  const chat = startChat({
    BUTLER_BASE_URL: model.baseUrl,
    BUTLER_MODEL: 'chat-model',
    BUTLER_CONFIG: join(dataDir, 'butler.config.json'),
    BUTLER_DATA_DIR: dataDir,
    ...databaseEnv(databaseUrl),
  });
  try {
    await chat.waitFor('Butler chat with chat-model');
    chat.type('ship a mug');
    await chat.waitFor('shop asks: Where should the mug go?');
    // Each field is asked in turn, in the server's order; what does not fit is asked again.
    await chat.waitFor('Address (Where it goes): ');
    chat.type('x');
    await chat.waitFor('Speed');
    chat.type('2');
    await chat.waitFor('Copies (a whole number) [1] (optional): ');
    chat.type('');
    await chat.waitFor('Gift wrap [y/n] [false] (optional): ');
    chat.type('y');
    await chat.waitFor('Address: Enter at least 3 characters.');
    await chat.waitFor('Address (Where it goes): ', { times: 2 });
    chat.type('1 Main St');
    await chat.waitFor('Your mug is on its way.');
    chat.type('/quit');
    expect(await chat.exited()).toBe(0);
  } finally {
    chat.child.kill('SIGKILL');
    if (databaseUrl) await dropPostgresDatabase(databaseUrl);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const answered = { address: '1 Main St', speed: 'express', copies: 1, gift: true };

describe('a server’s question in the terminal chat', () => {
  it('asks each field in turn, asks again for what does not fit, and goes on with the answer', async () => {
    await shipAtThePrompt(shop2026.url);
    expect(shop2026.calls.at(-1)).toMatchObject({
      requestState: 'ship:mug',
      inputResponses: { shipping: { action: 'accept', content: answered } },
    });
  }, 60_000);

  it('answers a 2025 server’s question while its call waits', async () => {
    await shipAtThePrompt(shop2025.url);
    expect(shop2025.calls.at(-1)).toEqual({
      tool: 'ship',
      args: { item: 'mug' },
      answer: { action: 'accept', content: answered },
    });
  }, 60_000);
});
