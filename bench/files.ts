import { performance } from 'node:perf_hooks';
import sharp from 'sharp';
import { defaultFileLimits } from '../src/config/files.js';
import type { ConversationAddress } from '../src/core/contracts/events.js';
import { PdfReader } from '../src/core/files/pdf-reader.js';
import { readFileForModel } from '../src/core/files/read-file.js';
import { startTestButler } from '../tests/helpers/butler-app.js';
import { type RecordedRequest, startFakeModelServer, userParts } from '../tests/helpers/fake-model-server.js';
import { inboundMessage } from '../tests/helpers/messages.js';
import { RecordingAdapter } from '../tests/helpers/recording-adapter.js';
import { makePdf, makePng } from '../tests/helpers/sample-files.js';
import type { Benchmark, BenchmarkContext } from './lib/benchmark.js';
import { bullets, table } from './lib/markdown.js';
import { median, milliseconds } from './lib/stats.js';

/**
 * Files: what reading a shared file costs (a phone screenshot, a 50-page PDF), and what images cost the
 * prompt over a conversation: Butler sends an image while its message is recent and fits the file budget,
 * against sending every image of the window on every turn (the budget lifted), same conversation, same run.
 */

const readLimits = { maxPdfPages: 50, maxChars: 50_000, imageMaxSide: 1568, vision: true, imageSeconds: 10 };
const pdfs = new PdfReader({ deadlineMs: 10_000, memoryMb: 256, parallel: 2 });

async function timed(runs: number, work: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    await work();
    times.push(performance.now() - started);
  }
  return median(times);
}

async function readingCosts(context: BenchmarkContext) {
  const runs = context.quick ? 2 : 7;
  // Noise is the worst case for a JPEG: a real photo compresses better.
  const photo = new Uint8Array(
    await sharp({
      create: {
        width: 4032,
        height: 3024,
        channels: 3,
        background: '#000',
        noise: { type: 'gaussian', mean: 128, sigma: 40 },
      },
    })
      .png()
      .toBuffer(),
  );
  const pages = Array.from(
    { length: 50 },
    (_, page) => `Page ${page + 1}: ${'quarterly numbers '.repeat(20)}`,
  );
  const pdf = await makePdf(pages);
  const image = await readFileForModel(
    { name: 'photo.png', mimeType: 'image/png', bytes: photo },
    readLimits,
    pdfs,
  );
  return {
    rows: [
      [
        '12 MP PNG photo → 1568 px JPEG',
        `${(photo.byteLength / 1024).toFixed(0)} KB → ${((image.preview?.bytes.byteLength ?? 0) / 1024).toFixed(0)} KB`,
        milliseconds(
          await timed(runs, () =>
            readFileForModel({ name: 'p.png', mimeType: 'image/png', bytes: photo }, readLimits, pdfs),
          ),
        ),
      ],
      [
        '50-page PDF → text',
        `${(pdf.byteLength / 1024).toFixed(0)} KB`,
        milliseconds(
          await timed(runs, () =>
            readFileForModel({ name: 'r.pdf', mimeType: 'application/pdf', bytes: pdf }, readLimits, pdfs),
          ),
        ),
      ],
    ],
  };
}

/** Bytes of image data URLs in a request, and how many. */
function images(request: RecordedRequest) {
  const urls = userParts(request).flatMap((part) => (part.type === 'image_url' ? [part.url] : []));
  return { count: urls.length, bytes: urls.reduce((sum, url) => sum + url.length, 0) };
}

/** Twelve turns; screenshots shared on turns 1, 4 and 7; every request's images counted. */
async function conversation(files: Record<string, number>, turns: number) {
  const model = await startFakeModelServer();
  const platform = new RecordingAdapter();
  model.setFallback({ text: 'Noted.' });
  const app = await startTestButler({
    env: { BUTLER_BASE_URL: model.baseUrl, BUTLER_MODEL: 'bench-model' },
    config: { files },
    adapters: [platform],
  });
  try {
    const address: ConversationAddress = {
      platform: 'console',
      workspace: 'local',
      channel: 'b',
      thread: 't',
    };
    for (let turn = 1; turn <= turns; turn++) {
      const shares = [1, 4, 7].includes(turn);
      const locator = `https://files.example/${turn}.png`;
      if (shares)
        platform.hostedFiles.set(locator, {
          name: `${turn}.png`,
          mimeType: 'image/png',
          bytes: await makePng(1920, 1080, `#${(turn * 30).toString(16).padStart(2, '0')}6699`),
        });
      const files = shares ? [{ key: `F${turn}`, name: `${turn}.png`, locator }] : [];
      await app.butler.service.accept(inboundMessage({ text: `turn ${turn}`, address, files }));
      await app.settle(30_000);
    }
    return model.requests.map(images);
  } finally {
    await app.close();
    await model.close();
  }
}

async function run(context: BenchmarkContext) {
  const turns = context.quick ? 8 : 12;
  context.log('files: reading costs');
  const reading = await readingCosts(context);
  context.log('files: images over a conversation, with the budget and without');
  const tight = await conversation({ imagePromptTokens: 1_500 }, turns);
  const defaults = await conversation({}, turns);
  const everything = await conversation({ imagePromptTokens: 2_000_000 }, turns);
  const total = (requests: Array<{ bytes: number }>) =>
    requests.reduce((sum, request) => sum + request.bytes, 0);
  const megabytes = (bytes: number) => `${(bytes / 1_048_576).toFixed(2)} MB`;
  const ratio = total(everything) / Math.max(1, total(defaults));
  const markdown = [
    table(['file', 'size', 'read, ms (median)'], reading.rows),
    '',
    table(
      ['policy', 'images per request (turn 1…)', 'image data sent over the conversation'],
      [
        [
          'Butler, `files.imagePromptTokens: 1500` (one earlier screenshot)',
          tight.map((request) => request.count).join(' '),
          megabytes(total(tight)),
        ],
        [
          `Butler, the default \`files.imagePromptTokens: ${defaultFileLimits.imagePromptTokens}\``,
          defaults.map((request) => request.count).join(' '),
          megabytes(total(defaults)),
        ],
        [
          'every image of the window on every turn (no image budget)',
          everything.map((request) => request.count).join(' '),
          megabytes(total(everything)),
        ],
      ],
    ),
    '',
    bullets([
      `${turns} turns, a 1920×1080 screenshot shared on turns 1, 4 and 7 (each 1568×882 as shown, 1,445 tokens).`,
      `Sending every image of the window again costs ${ratio.toFixed(1)}× the image data of the default policy here (images of earlier turns within \`files.imagePromptTokens\`, ${defaultFileLimits.imagePromptTokens} tokens: the newest two screenshots). Once compaction folds a message into the summary its image is only named.`,
      'Reading runs in the worker before the model call; the photo and PDF times add to that turn only.',
    ]),
  ].join('\n');
  return { markdown };
}

export const filesBenchmark: Benchmark = {
  name: 'files',
  title: '11. Files: reading costs, and images in prompts',
  run,
};
