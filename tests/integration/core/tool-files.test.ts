import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ConversationAddress } from '../../../src/core/contracts/events.js';
import { startTestButler, type TestButler } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import { type FakeModelServer, startFakeModelServer } from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';
import { makePdf, makePng, sampleCsv } from '../../helpers/sample-files.js';
import { startToolServer, type ToolServer } from '../../helpers/tool-server.js';

let model: FakeModelServer;
let endpoint: ToolServer;
let platform: RecordingAdapter;
let app: TestButler;
let thread = 0;

const tool = (name: string, risk: 'low' | 'high', path: string) => ({
  name,
  description: `The ${name} tool.`,
  risk,
  input: { type: 'object', properties: {} },
  http: { method: 'GET', url: `${endpoint.url}${path}` },
});

beforeAll(async () => {
  model = await startFakeModelServer();
  endpoint = await startToolServer();
  platform = new RecordingAdapter();
  app = await startTestButler({
    env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model' },
    config: {
      approvers: { console: ['olga'] },
      tools: [
        tool('render_chart', 'low', '/chart.png'),
        tool('export_errors', 'low', '/export'),
        tool('print_invoice', 'high', '/invoice'),
      ],
    },
    adapters: [platform],
  });
});
afterAll(async () => {
  await app.close();
  await model.close();
  await endpoint.close();
});
beforeEach(() => model.reset());

/** A turn in which the model calls `name` once, then answers; returns where it happened. */
async function askFor(name: string, callId?: string): Promise<ConversationAddress> {
  thread += 1;
  const address: ConversationAddress = {
    platform: 'console',
    workspace: 'local',
    channel: 'ops',
    thread: `t${thread}`,
  };
  model.enqueue(
    { toolCalls: [{ id: callId ?? `call_${thread}`, name, arguments: '{}' }] },
    { text: 'Done.' },
  );
  await app.butler.service.accept(inboundMessage({ text: 'please', address, isDirect: false }));
  await app.settle();
  return address;
}

const sentIn = (address: ConversationAddress) =>
  platform.sentFiles.filter((entry) => entry.target.address.thread === address.thread);

const toolMessage = () =>
  String(model.requests.at(-1)?.messages.find((message) => message.role === 'tool')?.content ?? '');

describe(`files that tools answer with (${databaseKind})`, () => {
  it('sends an image an HTTP tool answered with into the thread; the model reads a line about it', async () => {
    const png = await makePng(120, 80);
    endpoint.respond({ body: png, headers: { 'content-type': 'image/png' } }, '/chart.png');
    const address = await askFor('render_chart');
    const [sent] = sentIn(address);
    expect(sent?.file).toMatchObject({ name: 'chart.png', mimeType: 'image/png' });
    expect(Buffer.from(sent?.file.bytes ?? []).equals(Buffer.from(png))).toBe(true);
    expect(sent?.target.replyTo).toBeDefined();
    expect(toolMessage()).toMatch(
      /^HTTP 200: the answer is a file\.\n\[file file_\w+ sent to the conversation: chart\.png \(image\/png, \d+ K?B\)\]$/,
    );
  });

  it("sends each conversation its own file when the model's call ids repeat (call_0 in every turn)", async () => {
    const attachment = { 'content-type': 'text/csv', 'content-disposition': 'attachment; filename="e.csv"' };
    endpoint.respond({ body: 'first', headers: attachment }, '/export');
    const first = await askFor('export_errors', 'call_0');
    endpoint.respond({ body: 'second', headers: attachment }, '/export');
    const second = await askFor('export_errors', 'call_0');
    const text = (address: ConversationAddress) =>
      sentIn(address).map((entry) => new TextDecoder().decode(entry.file.bytes));
    expect(text(first)).toEqual(['first']);
    expect(text(second)).toEqual(['second']);
    expect(toolMessage()).not.toMatch(/already sent/);
  });

  it('names an attachment as its Content-Disposition says, whatever its type', async () => {
    endpoint.respond(
      {
        body: sampleCsv,
        headers: {
          'content-type': 'text/csv',
          'content-disposition': 'attachment; filename="../errors.csv"',
        },
      },
      '/export',
    );
    const address = await askFor('export_errors');
    expect(
      sentIn(address).map((entry) => [entry.file.name, new TextDecoder().decode(entry.file.bytes)]),
    ).toEqual([['errors.csv', sampleCsv]]);
  });

  it('sends the file of a high-risk tool only after an approver said yes, and once', async () => {
    const pdf = await makePdf(['Invoice 9']);
    endpoint.respond({ body: pdf, headers: { 'content-type': 'application/pdf' } }, '/invoice');
    endpoint.requests.length = 0;
    thread += 1;
    const address: ConversationAddress = {
      platform: 'console',
      workspace: 'local',
      channel: 'ops',
      thread: `t${thread}`,
    };
    model.enqueue({ toolCalls: [{ id: `call_${thread}`, name: 'print_invoice', arguments: '{}' }] });
    await app.butler.service.accept(
      inboundMessage({ text: 'print it', address, isDirect: false, user: { id: 'ana', name: 'Ana' } }),
    );
    await app.settle();
    expect(endpoint.requests).toHaveLength(0);
    expect(sentIn(address)).toHaveLength(0);

    model.enqueue({ text: 'Printed.' });
    const approvalId = platform.lastCard().card.calls[0]?.approvalId ?? '';
    const decided = {
      approvalId,
      platform: 'console' as const,
      user: { id: 'olga' },
      decision: 'approve' as const,
    };
    expect(await app.butler.service.decide(decided)).toMatchObject({ ok: true });
    await app.butler.service.decide(decided);
    await app.settle();
    expect(endpoint.requests).toHaveLength(1);
    expect(sentIn(address).map((entry) => entry.file.name)).toEqual(['print_invoice.pdf']);
  });

  it('refuses a file larger than the tool may send, and sends nothing', async () => {
    endpoint.respond(
      { streamBytes: 21 * 1024 * 1024, headers: { 'content-type': 'application/zip' } },
      '/export',
    );
    const address = await askFor('export_errors');
    expect(sentIn(address)).toHaveLength(0);
    expect(toolMessage()).toContain('larger than 20971520 bytes; Butler did not send it');
  });
});
