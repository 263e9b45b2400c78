import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderCard } from '../../../src/adapters/terminal-chat/console-adapter.js';
import type { ApprovalCard, ApprovalCardCall } from '../../../src/core/contracts/approval-card.js';
import { startChat } from '../../helpers/chat-process.js';
import {
  createPostgresDatabase,
  databaseEnv,
  dropPostgresDatabase,
  testDatabaseUrl,
} from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { openAuthorization } from '../../helpers/oauth-mcp-client.js';
import { startOAuthMcpServer } from '../../helpers/oauth-mcp-server.js';
import { makePng } from '../../helpers/sample-files.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';
import { CookieJar } from '../mcp-oauth/oauth-butler.js';

let model: FakeModelServer;
let tools: ToolServer;

/** A port nothing listens on now (the chat's Connect pages take it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
}
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
    expect(await chat.exited()).toBe(1);
    expect(chat.output()).toContain('npm run chat needs a model');
    expect(chat.output()).toContain('BUTLER_MODEL=demo npm run chat');
  });

  it('tells the person when the model is unreachable, and keeps the log out of the chat', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'butler-chat-'));
    const databaseUrl = testDatabaseUrl ? await createPostgresDatabase() : undefined;
    // No retries: the failure is what is under test, not the backoff.
    writeFileSync(join(dataDir, 'butler.config.json'), JSON.stringify({ model: { maxRetries: 0 } }));
    // Port 9 (discard): nothing answers there.
    const chat = startChat({
      BUTLER_BASE_URL: 'http://127.0.0.1:9/v1',
      BUTLER_MODEL: 'chat-model',
      BUTLER_CONFIG: join(dataDir, 'butler.config.json'),
      BUTLER_DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      ...databaseEnv(databaseUrl),
    });
    try {
      await chat.waitFor('Butler chat with chat-model');
      chat.type('hello?');
      await chat.waitFor('⚠️');
      // The operator reads the terminal: it says which endpoint failed, and how.
      await chat.waitFor('http://127.0.0.1:9/v1 could not be reached (ECONNREFUSED');
      chat.type('/quit');
      expect(await chat.exited()).toBe(0);
      const shown = chat.output();
      expect(shown).not.toMatch(/"level":|\n\s+at /);
      expect(shown).toContain(`Logs: ${join(dataDir, 'chat.log')}`);
      expect(readFileSync(join(dataDir, 'chat.log'), 'utf8')).toContain('turn failed');
    } finally {
      chat.child.kill('SIGKILL');
      if (databaseUrl) await dropPostgresDatabase(databaseUrl);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('tells the model the time zone of the machine the chat runs on', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'butler-chat-'));
    const databaseUrl = testDatabaseUrl ? await createPostgresDatabase() : undefined;
    model.reset();
    model.enqueue({ text: 'It is morning in Tokyo.' });
    const chat = startChat({
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'chat-model',
      BUTLER_DATA_DIR: dataDir,
      TZ: 'Asia/Tokyo',
      ...databaseEnv(databaseUrl),
    });
    try {
      await chat.waitFor('Butler chat with chat-model');
      chat.type('what time is it here?');
      await chat.waitFor('It is morning in Tokyo.');
      chat.type('/quit');
      expect(await chat.exited()).toBe(0);
      expect(String(model.requests[0]?.messages[0]?.content)).toMatch(
        /The person's time zone is Asia\/Tokyo: .* there now\./,
      );
    } finally {
      chat.child.kill('SIGKILL');
      if (databaseUrl) await dropPostgresDatabase(databaseUrl);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  /** `npm run chat` with olga as the approver and a high-risk `restart_service` HTTP tool. */
  async function startChatWithTool(config: Record<string, unknown> = {}, env: Record<string, string> = {}) {
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
        ...config,
      }),
    );
    const chat = startChat({
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'chat-model',
      BUTLER_CONFIG: join(directory, 'butler.config.json'),
      BUTLER_DATA_DIR: join(directory, 'data'),
      ...databaseEnv(databaseUrl),
      ...env,
    });
    const cleanUp = async () => {
      chat.child.kill('SIGKILL');
      if (databaseUrl) await dropPostgresDatabase(databaseUrl);
      rmSync(directory, { recursive: true, force: true });
    };
    return { chat, cleanUp };
  }

  it('serves the Connect pages of a link it shows, and goes on once the person has connected', async () => {
    const provider = await startOAuthMcpServer();
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    const { chat, cleanUp } = await startChatWithTool(
      { mcpServers: [{ name: 'tickets', url: provider.url, oauth: { identity: 'person' } }] },
      { PORT: String(port), BUTLER_PUBLIC_URL: publicUrl, BUTLER_SECRET_KEY: 'b'.repeat(64) },
    );
    try {
      await chat.waitFor(`Connect links open on this machine: ${publicUrl}`);
      model.enqueue({ toolCalls: [{ id: 'call_connect', name: 'tickets__connect', arguments: '{}' }] });
      chat.type('connect my tickets account');
      await chat.waitFor('/connect/');
      const link = new RegExp(`${publicUrl}/connect/[A-Za-z0-9_-]{43}`).exec(chat.output())?.[0] ?? '';
      model.enqueue(
        { toolCalls: [{ id: 'call_whoami', name: 'tickets__whoami', arguments: '{}' }] },
        { text: 'You are dev@tickets here.' },
      );
      // The person's browser: the page, its button (a cookie binds the flow), the sign-in, back to the chat.
      const jar = new CookieJar();
      expect((await fetch(link)).status).toBe(200);
      const used = await fetch(link, { method: 'POST', redirect: 'manual' });
      jar.take(used);
      const back = await openAuthorization(used.headers.get('location') ?? '', 'dev@tickets');
      expect((await fetch(back, { headers: jar.header() })).status).toBe(200);
      await chat.waitFor('You are dev@tickets here.');
      expect(provider.calls().at(-1)).toMatchObject({ tool: 'whoami', account: 'dev@tickets' });
      chat.type('/quit');
      expect(await chat.exited()).toBe(0);
    } finally {
      await cleanUp();
      await provider.close();
    }
  }, 60_000);

  const restart = (id: string, service: string) => ({
    id,
    name: 'restart_service',
    arguments: JSON.stringify({ service }),
  });
  const restartedServices = () =>
    tools.requests.map((request) => (request.body as { service?: string }).service);

  it('runs on the demo model with no endpoint: a labelled streamed reply, a tool call and its approval', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'butler-chat-'));
    const database = testDatabaseUrl ? await createPostgresDatabase() : undefined;
    const chat = startChat({ BUTLER_MODEL: 'demo', BUTLER_DATA_DIR: dataDir, ...databaseEnv(database) });
    try {
      await chat.waitFor('Butler chat with the DEMO model');
      chat.type('hello there');
      await chat.waitFor('You wrote: “hello there”');
      expect(chat.output()).toContain('Demo model: scripted replies, not an LLM');
      chat.type('restart payments-api please');
      await chat.waitFor('Approval needed: demo_restart (high risk)');
      chat.type('/as demo-approver');
      await chat.waitFor('You are now "demo-approver"');
      chat.type('/approve');
      await chat.waitFor('payments-api restarted (demo: nothing was touched)');
      chat.type('/quit');
      expect(await chat.exited()).toBe(0);
    } finally {
      chat.child.kill();
      rmSync(dataDir, { recursive: true, force: true });
      if (database) await dropPostgresDatabase(database);
    }
  }, 60_000);

  it('holds a conversation with an approval', async () => {
    tools.requests.length = 0;
    const { chat, cleanUp } = await startChatWithTool();
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
      expect(chat.output()).toContain('/approve-conversation (for 8 h)');
      chat.type('/approve');
      await chat.waitFor('approver other than the person who asked');
      expect(tools.requests).toHaveLength(0);

      model.enqueue({ text: 'api was restarted.' });
      chat.type('/as olga');
      await chat.waitFor('You are now "olga"');
      chat.type('/approve');
      await chat.waitFor('api was restarted.');
      expect(tools.requests).toHaveLength(1);
      // Each tool that runs shows as a line of its own.
      expect(chat.output()).toContain('⚙ restart_service {"service":"api"}');
      expect(chat.output()).toContain('✓ restart_service');
      expect(model.requests.at(-1)?.messages.at(-1)).toMatchObject({ role: 'tool', content: '{"ok":true}' });

      chat.type('/quit');
      expect(await chat.exited()).toBe(0);
    } finally {
      await cleanUp();
    }
  }, 60_000);

  it('answers a scheduled task at the prompt, and a risky call in its run waits for /approve', async () => {
    tools.requests.length = 0;
    const { chat, cleanUp } = await startChatWithTool({ schedules: { checkEvery: '200ms' } });
    try {
      await chat.waitFor('Butler chat with chat-model');
      model.enqueue(
        {
          toolCalls: [
            { id: 'call_task', name: 'schedule_task', arguments: '{"prompt":"Restart api","at":"PT2S"}' },
          ],
        },
        (request) => ({ text: `Sure. ${String(request.messages.at(-1)?.content)}` }),
        { toolCalls: [{ id: 'call_run', name: 'restart_service', arguments: '{"service":"api"}' }] },
      );
      chat.type('in 2 seconds, restart api');
      await chat.waitFor('scheduled: next run');
      // The run's card shows while nobody typed; the prompt comes back under it, and /approve decides it.
      await chat.waitFor('Approval needed: restart_service (high risk)');
      await chat.waitFor(`${userInfo().username} › `, { times: 3 });
      // The run's answer and card start on a line of their own, not after the waiting prompt.
      expect(chat.output()).not.toMatch(new RegExp(`${userInfo().username} › \u001b\\[1m(⚠|butler ›)`));
      model.enqueue({ text: 'api was restarted.' });
      chat.type('/as olga');
      chat.type('/approve');
      await chat.waitFor('api was restarted.');
      expect(restartedServices()).toEqual(['api']);
      chat.type('/quit');
      expect(await chat.exited()).toBe(0);
    } finally {
      await cleanUp();
    }
  }, 60_000);

  it('stops an answer with /stop typed while it streams, then answers the next message', async () => {
    const { chat, cleanUp } = await startChatWithTool();
    try {
      await chat.waitFor('Butler chat with chat-model');
      model.enqueue({
        text: 'x',
        chunks: Array.from({ length: 200 }, (_, index) => `line${index} `),
        chunkDelayMs: 50,
      });
      chat.type('tell me everything');
      await chat.waitFor('line3 ');
      chat.type('/stop');
      await chat.waitFor('Stopped by ');
      expect(chat.output()).not.toContain('line199');
      expect(chat.output()).not.toContain('Nothing is running.');
      model.enqueue({ text: 'Briefly, then.' });
      chat.type('briefly');
      // The prompt comes back once the turn has ended: a /stop typed before it would still stop the turn.
      await chat.waitFor(`Briefly, then.\n\n${userInfo().username} › `);
      // Nothing streamed shows after "(stopping…)", and the prompt came back once before the next message.
      const afterStop = chat
        .output()
        .slice(chat.output().indexOf('(stopping…)'), chat.output().indexOf('Briefly'));
      expect(afterStop).not.toMatch(/line\d+ /);
      expect(afterStop.split(`${userInfo().username} › `)).toHaveLength(2);
      chat.type('/stop');
      await chat.waitFor('Nothing is running.');
      chat.type('/quit');
      expect(await chat.exited()).toBe(0);
    } finally {
      await cleanUp();
    }
  }, 60_000);

  it('decides a card of two calls one by one, all at once, and for the conversation', async () => {
    tools.requests.length = 0;
    const { chat, cleanUp } = await startChatWithTool();
    const switches: Record<string, number> = {};
    const actAs = async (user: string) => {
      switches[user] = (switches[user] ?? 0) + 1;
      chat.type(`/as ${user}`);
      await chat.waitFor(`You are now "${user}"`, { times: switches[user] });
    };
    try {
      await chat.waitFor('Butler chat with chat-model');
      await actAs('ana');

      // One model step, two calls: one card listing both.
      model.enqueue({ toolCalls: [restart('call_a', 'api'), restart('call_b', 'web')] });
      chat.type('restart api and web');
      await chat.waitFor('2 actions need approval');
      for (const expected of [
        '1. restart_service (high risk)',
        '2. restart_service (high risk)',
        '"service": "web"',
        '/approve <n|all>',
      ])
        expect(chat.output()).toContain(expected);
      chat.type('/approve');
      await chat.waitFor('2 actions are waiting: /approve <n> for one, or /approve all.');
      chat.type('/approve all');
      await chat.waitFor('approver other than the person who asked');

      await actAs('olga');
      chat.type('/approve 3');
      await chat.waitFor('There is no action 3; the card has 2.');
      chat.type('/approve 1');
      await chat.waitFor('2. restart_service: waiting');
      expect(chat.output()).toContain('1. restart_service: Approved by olga');
      // The turn goes on only once both are decided.
      expect(tools.requests).toHaveLength(0);

      model.enqueue({ text: 'api restarted; web left alone.' });
      chat.type('/reject 2 not today');
      await chat.waitFor('api restarted; web left alone.');
      expect(chat.output()).toContain('Rejected by olga: not today');
      expect(restartedServices()).toEqual(['api']);
      const toolMessages = model.requests.at(-1)?.messages.filter((message) => message.role === 'tool');
      expect(toolMessages?.map((message) => message.tool_call_id)).toEqual(['call_a', 'call_b']);

      // Approve all: both run, once each.
      await actAs('ana');
      model.enqueue({ toolCalls: [restart('call_c', 'api'), restart('call_d', 'web')] });
      model.enqueue({ text: 'Both restarted.' });
      chat.type('restart both again');
      await chat.waitFor('2 actions need approval', { times: 2 });
      await actAs('olga');
      chat.type('/approve all');
      await chat.waitFor('Both restarted.');
      expect(restartedServices()).toEqual(['api', 'api', 'web']);

      // For the conversation: the next call of the tool here runs without a card.
      await actAs('ana');
      model.enqueue({ toolCalls: [restart('call_e', 'db')] });
      model.enqueue({ text: 'db restarted.' });
      chat.type('restart db');
      await chat.waitFor('Approval needed: restart_service (high risk)');
      await actAs('olga');
      chat.type('/approve-conversation');
      await chat.waitFor('db restarted.');
      expect(chat.output()).toContain('Approved for this conversation by olga until');
      const cardsSoFar = chat.output().split('⚠').length;
      await actAs('ana');
      model.enqueue({ toolCalls: [restart('call_f', 'cache')] });
      model.enqueue({ text: 'cache restarted.' });
      chat.type('restart cache');
      await chat.waitFor('cache restarted.');
      expect(chat.output().split('⚠').length).toBe(cardsSoFar);
      expect(restartedServices()).toEqual(['api', 'api', 'web', 'db', 'cache']);

      chat.type('/quit');
      expect(await chat.exited()).toBe(0);
    } finally {
      await cleanUp();
    }
  }, 60_000);
  it('shares files with /attach and saves the files Butler sends, never over another', async () => {
    // 10 KB a file at most.
    const { chat, cleanUp } = await startChatWithTool({ files: { maxFileMegabytes: 10 / 1024 } });
    try {
      const csv = 'service,errors\napi,12\n';
      writeFileSync(join(chat.cwd, 'errors.csv'), csv);
      writeFileSync(join(chat.cwd, 'chart.png'), await makePng(64, 48));
      writeFileSync(join(chat.cwd, 'big.log'), 'x'.repeat(20 * 1024));
      await chat.waitFor('Butler chat with chat-model');
      const asked = model.requests.length;

      chat.type('/attach missing.txt');
      await chat.waitFor(`No file at ${join(chat.cwd, 'missing.txt')}.`);
      chat.type('/attach big.log');
      await chat.waitFor('big.log is 20 KB; Butler takes files up to 10 KB (files.maxFileMegabytes).');
      expect(model.requests).toHaveLength(asked);

      model.enqueue({ text: 'api has 12 errors.' });
      chat.type('/attach errors.csv which service has errors?');
      await chat.waitFor('api has 12 errors.');
      const sent = JSON.stringify(model.requests.at(-1)?.messages.at(-1));
      expect(sent).toContain('which service has errors?');
      expect(sent).toContain('service,errors\\napi,12');

      model.enqueue({ text: 'A blue rectangle.' });
      chat.type('/attach chart.png');
      await chat.waitFor('A blue rectangle.');
      expect(JSON.stringify(model.requests.at(-1)?.messages.at(-1))).toMatch(
        /"type":"image_url","image_url":\{[^}]*"url":"data:image\/jpeg;base64,/,
      );

      const attach = (id: string, content: string) => ({
        toolCalls: [
          { id, name: 'attach_file', arguments: JSON.stringify({ filename: 'errors.csv', content }) },
        ],
      });
      model.enqueue(attach('attach_1', 'a,b\n1,2\n'), { text: 'Here it is.' });
      chat.type('send me the errors as a file');
      await chat.waitFor(`Butler sent a file: ${join('butler-files', 'errors.csv')}`);
      model.enqueue(attach('attach_2', 'a,b\n3,4\n'), { text: 'And again.' });
      chat.type('once more');
      await chat.waitFor(`Butler sent a file: ${join('butler-files', 'errors-1.csv')}`);
      await chat.waitFor('And again.');
      expect(readFileSync(join(chat.cwd, 'butler-files', 'errors.csv'), 'utf8')).toBe('a,b\n1,2\n');
      expect(readFileSync(join(chat.cwd, 'butler-files', 'errors-1.csv'), 'utf8')).toBe('a,b\n3,4\n');

      chat.type('/quit');
      expect(await chat.exited()).toBe(0);
    } finally {
      await cleanUp();
    }
  }, 60_000);
});

describe('the terminal approval card', () => {
  const call: ApprovalCardCall = {
    approvalId: 'ap-1',
    status: 'pending',
    toolName: 'restart_service',
    summary: 'Restart api',
    argumentsJson: '{"service":"api"}',
    argumentsLength: 17,
    argumentsCut: false,
    risk: 'high',
    whoMayApprove: 'an approver other than the requester',
  };
  const card = (calls: ApprovalCardCall[]): ApprovalCard => ({
    batchId: 'batch-1',
    calls,
    requesters: [{ id: 'ana', name: 'Ana' }],
    approverIds: ['olga'],
    expiresAt: new Date('2026-11-20T13:00:00Z'),
  });

  it('says which specialist agent asks, and for whom, on cards of one call and of several', () => {
    const one = renderCard(card([{ ...call, agent: 'ops' }]));
    expect(one).toContain(
      'Approval needed: restart_service (high risk)\u001b[22m\n  asked by the ops agent for Ana\n',
    );
    const several = renderCard(
      card([{ ...call, agent: 'ops' }, { ...call, approvalId: 'ap-2', agent: 'docs' }, call]),
    );
    expect(several).toContain('  1. restart_service (high risk)\n     asked by the ops agent for Ana\n');
    expect(several).toContain('  2. restart_service (high risk)\n     asked by the docs agent for Ana\n');
    expect(several.match(/asked by/g)).toHaveLength(2);
    expect(renderCard(card([call]))).not.toContain('asked by');
  });
});
