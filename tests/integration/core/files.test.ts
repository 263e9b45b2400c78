import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { encodeConversationKey } from '../../../src/core/contracts/conversation-key.js';
import type { ConversationAddress } from '../../../src/core/contracts/events.js';
import type { InboundFile } from '../../../src/core/contracts/files.js';
import { startTestButler, type TestButler, type TestButlerOptions } from '../../helpers/butler-app.js';
import { databaseKind } from '../../helpers/database.js';
import {
  type FakeModelServer,
  type RecordedRequest,
  startFakeModelServer,
  userParts,
} from '../../helpers/fake-model-server.js';
import { inboundMessage } from '../../helpers/messages.js';
import { RecordingAdapter } from '../../helpers/recording-adapter.js';
import { makePdf, makePng, sampleCsv } from '../../helpers/sample-files.js';
import { waitFor } from '../../helpers/wait-for.js';

let model: FakeModelServer;
let platform: RecordingAdapter;
let app: TestButler;
let thread = 0;

const appOptions = (config: Record<string, unknown> = {}): TestButlerOptions => ({
  env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'test-model' },
  config: { model: { timeoutMs: 10_000, maxRetries: 0 }, ...config },
  adapters: [platform],
});

beforeAll(async () => {
  model = await startFakeModelServer();
});
afterAll(async () => {
  await model.close();
});
beforeEach(() => model.reset());

function newAddress(): ConversationAddress {
  thread += 1;
  return { platform: 'console', workspace: 'local', channel: 'files', thread: `f${thread}` };
}

/** A file on the fake platform's file host, and the message-side description of it. */
function host(name: string, mimeType: string, bytes: Uint8Array, size = bytes.byteLength): InboundFile {
  const locator = `https://files.example/${thread}/${name}`;
  platform.hostedFiles.set(locator, { name, mimeType, bytes });
  return { key: `F-${thread}-${name}`, name, mimeType, size, locator };
}

async function share(address: ConversationAddress, text: string, files: InboundFile[]) {
  await app.butler.service.accept(
    inboundMessage({ text, address, user: { id: 'ana', name: 'Ana' }, isDirect: false, files }),
  );
}

const reply = (address: ConversationAddress) =>
  platform.replies.find((entry) => entry.target.address.thread === address.thread)?.finalText ?? '';

const imageUrls = (request: RecordedRequest | undefined) =>
  request ? userParts(request).flatMap((part) => (part.type === 'image_url' ? [part.url] : [])) : [];
const texts = (request: RecordedRequest | undefined) =>
  request
    ? userParts(request)
        .flatMap((part) => (part.type === 'text' ? [part.text] : []))
        .join('\n')
    : '';

describe(`shared files reach the model (${databaseKind})`, () => {
  beforeAll(async () => {
    platform = new RecordingAdapter();
    // Room in a prompt for one 512-pixel image (255 tokens) and a little text, not for two images.
    app = await startTestButler(
      appOptions({ files: { imageMaxPixels: 512, maxPdfPages: 2, promptTokens: 400 } }),
    );
  });
  afterAll(() => app.close());

  it('shows an image downscaled, a PDF as its text and a CSV as text; stores each once', async () => {
    const address = newAddress();
    const png = await makePng(2000, 1000);
    const pdf = await makePdf(['Invoice 4471: total due 1,234.56 EUR', 'Page two says hello']);
    model.enqueue({ text: 'A blue picture, an invoice and a CSV.' });
    await share(address, 'what are these?', [
      host('screen.png', 'image/png', png),
      host('invoice.pdf', 'application/pdf', pdf),
      host('errors.csv', 'text/csv', new TextEncoder().encode(sampleCsv)),
    ]);
    await app.settle();

    const [request] = model.requests;
    const [image] = imageUrls(request);
    expect(image).toMatch(/^data:image\/jpeg;base64,/);
    const shown = await sharp(Buffer.from(image?.split(',')[1] ?? '', 'base64')).metadata();
    expect([shown.width, shown.height]).toEqual([512, 256]);
    expect(texts(request)).toContain('Invoice 4471: total due 1,234.56 EUR');
    expect(texts(request)).toContain('Page two says hello');
    expect(texts(request)).toContain('worker,0');
    expect(texts(request)).toContain('screen.png (image, 512×256 as shown');
    expect(reply(address)).toBe('A blue picture, an invoice and a CSV.');

    const stored = await app.butler.store.files.findByKey('console', `F-${thread}-invoice.pdf`);
    expect(stored).toMatchObject({
      conversationKey: encodeConversationKey(address),
      uploadedBy: { platform: 'console', id: 'ana' },
      kind: 'text',
      mimeType: 'application/pdf',
    });
    const bytes = await app.butler.store.files.content(stored?.sha256 ?? '');
    expect(Buffer.from(bytes ?? []).equals(Buffer.from(pdf))).toBe(true);
    // The history keeps a one-line description, never the bytes.
    const conversation = await app.butler.store.conversations.find(encodeConversationKey(address));
    const [question] = await app.butler.store.conversations.window(conversation?.id ?? '');
    expect(question?.content).toContain('[shared file file_');
    expect(question?.content).not.toContain('Invoice 4471');
    expect(question?.role === 'user' ? question.files?.map((file) => file.name) : []).toEqual([
      'screen.png',
      'invoice.pdf',
      'errors.csv',
    ]);
  });

  it('says in the reply what it cut or skipped, and skips an oversized file without downloading it', async () => {
    const address = newAddress();
    const pdf = await makePdf(['one', 'two', 'three', 'four']);
    const huge = host('dump.bin', 'application/octet-stream', new Uint8Array(8), 500 * 1024 * 1024);
    model.enqueue({ text: 'Read what I could.' });
    await share(address, 'look', [host('long.pdf', 'application/pdf', pdf), huge]);
    await app.settle();

    expect(platform.downloads.get(huge.locator)).toBeUndefined();
    const shown = reply(address);
    expect(shown).toMatch(/^_About the files: long\.pdf: I read the first 2 of its 4 pages; /);
    expect(shown).toContain('dump.bin: skipped, 500.0 MB is over my limit of 20.0 MB per file');
    expect(shown).toContain('Read what I could.');
    expect(texts(model.requests[0])).toContain('[not read: dump.bin: skipped');
  });

  it('tells the model about a file it cannot download, and still answers', async () => {
    const address = newAddress();
    model.enqueue({ text: 'Answered anyway.' });
    await share(address, 'here', [
      { key: 'gone', name: 'gone.txt', locator: 'https://files.example/missing' },
    ]);
    await app.settle();
    expect(reply(address)).toContain('gone.txt: I could not download it (file_not_found');
    expect(reply(address)).toContain('Answered anyway.');
  });

  it('sends images again only while they fit the prompt budget, newest first', async () => {
    const address = newAddress();
    model.enqueue({ text: 'first' }, { text: 'second' }, { text: 'third' });
    await share(address, 'one', [host('a.png', 'image/png', await makePng(512, 512, '#ff0000'))]);
    await app.settle();
    await share(address, 'two', [host('b.png', 'image/png', await makePng(512, 512, '#00ff00'))]);
    await app.settle();
    await share(address, 'no picture this time', []);
    await app.settle();
    // 512×512 is 255 tokens each: only the newest fits, and the older one is named, not sent.
    const [first, second, third] = model.requests.map(imageUrls);
    expect([first?.length, second?.length, third?.length]).toEqual([1, 1, 1]);
    expect(second).not.toEqual(first);
    expect(third).toEqual(second);
    expect(texts(model.requests[2])).toContain('a.png (image, 512×512 as shown');
  });

  it('sends the CSV the model wrote with attach_file into the thread, once', async () => {
    const address = newAddress();
    model.enqueue(
      {
        toolCalls: [
          {
            id: 'call_csv',
            name: 'attach_file',
            arguments: JSON.stringify({ filename: 'errors.csv', content: sampleCsv }),
          },
        ],
      },
      { text: 'Here is the CSV.' },
    );
    await share(address, 'send me the errors as CSV', []);
    await app.settle();
    const sent = platform.sentFiles.filter((entry) => entry.target.address.thread === address.thread);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.file).toMatchObject({ name: 'errors.csv', mimeType: 'text/csv' });
    expect(new TextDecoder().decode(sent[0]?.file.bytes)).toBe(sampleCsv);
    const toolMessage = model.requests[1]?.messages.find((message) => message.role === 'tool');
    expect(String(toolMessage?.content)).toMatch(
      /^\[file file_\w+ sent to the conversation: errors\.csv \(text\/csv, \d+ B\)\]$/,
    );
    expect(reply(address)).toBe('Here is the CSV.');
  });
});

describe(`images of earlier turns within their own budget (${databaseKind})`, () => {
  beforeAll(async () => {
    platform = new RecordingAdapter();
    app = await startTestButler(appOptions({ files: { imageMaxPixels: 512, imagePromptTokens: 0 } }));
  });
  afterAll(() => app.close());

  it('always shows the images of the message it answers, and earlier ones only by name', async () => {
    const address = newAddress();
    model.enqueue({ text: 'first' }, { text: 'second' });
    await share(address, 'one', [host('a.png', 'image/png', await makePng(512, 512, '#ff0000'))]);
    await app.settle();
    await share(address, 'two', [
      host('b.png', 'image/png', await makePng(512, 512, '#00ff00')),
      host('c.png', 'image/png', await makePng(512, 512, '#0000ff')),
    ]);
    await app.settle();
    expect(model.requests.map((request) => imageUrls(request).length)).toEqual([1, 2]);
    expect(texts(model.requests[1])).toContain('a.png (image, 512×512 as shown');
  });
});

describe(`a model that cannot see (${databaseKind})`, () => {
  beforeAll(async () => {
    platform = new RecordingAdapter();
    app = await startTestButler(appOptions({ model: { timeoutMs: 10_000, maxRetries: 0, vision: false } }));
  });
  afterAll(() => app.close());

  it('is told an image was shared and cannot be seen, and the reply says so', async () => {
    const address = newAddress();
    model.enqueue({ text: 'I cannot see it.' });
    await share(address, 'what is this?', [host('photo.png', 'image/png', await makePng(64, 64))]);
    await app.settle();
    expect(imageUrls(model.requests[0])).toEqual([]);
    expect(texts(model.requests[0])).toContain('photo.png (image, ');
    expect(texts(model.requests[0])).toContain('the model here cannot see images');
    expect(reply(address)).toContain('photo.png: I cannot see images with the model I use');
  });
});

describe(`a restart in the middle of a turn (${databaseKind})`, () => {
  it('does not download a file twice', async () => {
    platform = new RecordingAdapter();
    const dataDir = mkdtempSync(join(tmpdir(), 'butler-files-'));
    const first = await startTestButler({ ...appOptions(), dataDir });
    app = first;
    const address = newAddress();
    const file = host(
      'notes.txt',
      'text/plain',
      new TextEncoder().encode('the deploy key rotates on Fridays'),
    );
    try {
      model.enqueue({ hang: true });
      await share(address, 'summarise', [file]);
      await waitFor(() => model.requests.length === 1, 10_000);
      await first.stop();
      model.enqueue({ text: 'It rotates on Fridays.' });
      const second = await startTestButler({
        ...appOptions(),
        dataDir,
        ...(first.databaseUrl ? { databaseUrl: first.databaseUrl } : {}),
      });
      try {
        await second.settle(20_000);
        expect(platform.downloads.get(file.locator)).toBe(1);
        expect(texts(model.requests.at(-1))).toContain('the deploy key rotates on Fridays');
        expect(platform.finalTexts()).toContain('It rotates on Fridays.');
      } finally {
        await second.close();
      }
    } finally {
      await first.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
