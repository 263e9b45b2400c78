import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresDatabase, dropPostgresDatabase, testDatabaseUrl } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';

/** Runs `npm run chat`'s entry point as a user would, typing lines once the expected output shows. */
function startChat(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/adapters/console/main.ts'], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: 'pipe',
  });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += String(chunk);
  });
  child.stderr.on('data', (chunk) => {
    output += String(chunk);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const waitFor = async (text: string, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!output.includes(text)) {
      if (Date.now() > deadline) throw new Error(`never saw "${text}" in:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  return {
    child,
    exited,
    waitFor,
    output: () => output,
    type: (line: string) => child.stdin.write(`${line}\n`),
  };
}

let model: FakeModelServer;
let tools: ToolServer;
beforeAll(async () => {
  model = await startFakeModelServer();
  tools = await startToolServer();
});
afterAll(async () => {
  await model.close();
  await tools.close();
});

describe('npm run chat', () => {
  it('exits with a clear message when no model is configured', async () => {
    const chat = startChat({ BUTLER_DATA_DIR: mkdtempSync(join(tmpdir(), 'butler-chat-')) });
    expect(await chat.exited).toBe(1);
    expect(chat.output()).toContain('npm run chat needs a model');
  });

  it('holds a conversation with an approval', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'butler-chat-'));
    const databaseUrl = testDatabaseUrl ? await createPostgresDatabase() : undefined;
    writeFileSync(
      join(directory, 'butler.config.json'),
      JSON.stringify({
        approvers: { console: ['olga'] },
        tools: [
          {
            name: 'restart_service',
            description: 'Restart a service.',
            risk: 'high',
            input: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
            http: { url: `${tools.url}/restart` },
          },
        ],
      }),
    );
    const chat = startChat({
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'chat-model',
      BUTLER_CONFIG: join(directory, 'butler.config.json'),
      BUTLER_DATA_DIR: join(directory, 'data'),
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    });
    try {
      await chat.waitFor('Butler chat with chat-model');
      model.enqueue({ text: 'Hello from the terminal.' });
      chat.type('hi');
      await chat.waitFor('Hello from the terminal.');

      model.enqueue({
        toolCalls: [{ id: 'call_1', name: 'restart_service', arguments: '{"service":"api"}' }],
      });
      chat.type('restart api please');
      await chat.waitFor('Approval needed: restart_service (high risk)');
      chat.type('/approve');
      await chat.waitFor('approver other than the person who asked');
      expect(tools.requests).toHaveLength(0);

      model.enqueue({ text: 'api was restarted.' });
      chat.type('/as olga');
      await chat.waitFor('You are now "olga"');
      chat.type('/approve');
      await chat.waitFor('api was restarted.');
      expect(tools.requests).toHaveLength(1);
      expect(model.requests.at(-1)?.messages.at(-1)).toMatchObject({ role: 'tool', content: '{"ok":true}' });

      chat.type('/quit');
      expect(await chat.exited).toBe(0);
    } finally {
      chat.child.kill('SIGKILL');
      if (databaseUrl) await dropPostgresDatabase(databaseUrl);
      rmSync(directory, { recursive: true, force: true });
    }
  }, 60_000);
});
