import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { ConsoleAdapter } from '../src/adapters/terminal-chat/console-adapter.js';
import { createButler } from '../src/app/index.js';
import { loadConfig } from '../src/config/index.js';
import { silentLogger } from '../src/core/contracts/logger.js';
import { startFakeModelServer } from '../tests/helpers/fake-model-server.js';

/**
 * The pictures in the README, taken from Butler itself: `npx tsx scripts/screenshots.ts`.
 *
 * One Butler (embedded database in memory, a scripted fake model) serves the admin console and holds a
 * terminal-chat conversation, rendered by the same adapter `npm run chat` uses. In that conversation the
 * model asks for a high-risk tool; the terminal's approval card is saved as text, and the admin console's
 * Approvals tab, signed in with an approver's key, as a PNG. The tool itself never runs.
 * Needs Debian's Chromium at /usr/bin/chromium (`apt-get install -y chromium`); `pngquant`, when present,
 * shrinks the PNG to 256 colours.
 */

const chromiumPath = '/usr/bin/chromium';
const imagesDirectory = fileURLToPath(new URL('../docs/images/', import.meta.url));
const approverKey = 'oncall-screenshot-key-0123456789';

const ansi = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

async function main(): Promise<void> {
  if (!existsSync(chromiumPath))
    throw new Error(`needs Chromium at ${chromiumPath} (apt-get install -y chromium)`);
  mkdirSync(imagesDirectory, { recursive: true });
  const model = await startFakeModelServer();
  const directory = mkdtempSync(join(tmpdir(), 'butler-screenshots-'));
  const configPath = join(directory, 'butler.config.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      approvers: { console: ['olga'], api: ['oncall'] },
      tools: [
        {
          name: 'restart_service',
          description: 'Restart a production service by name.',
          risk: 'high',
          input: {
            type: 'object',
            properties: {
              service: { type: 'string', description: 'Service name' },
              reason: { type: 'string', description: 'Why, for the change log' },
            },
            required: ['service'],
          },
          // Never called: the request stays pending.
          http: { method: 'POST', url: 'https://ops.example.com/restart' },
        },
      ],
      api: {
        // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
        keys: [{ name: 'oncall', key: '${BUTLER_API_KEY_ONCALL}', scopes: ['chat', 'approve', 'read'] }],
      },
    }),
  );
  const { config } = loadConfig(
    {
      PORT: '0',
      BUTLER_CONFIG: configPath,
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'gpt-4o-mini',
      BUTLER_API_KEY_ONCALL: approverKey,
    },
    directory,
  );

  let terminal = '';
  const output = new PassThrough();
  output.on('data', (chunk) => {
    terminal += String(chunk);
  });
  const adapter = new ConsoleAdapter(output, join(directory, 'butler-files'));
  const butler = await createButler(config, {
    logger: silentLogger,
    listen: true,
    adapters: [adapter],
    dataDir: 'memory://',
  });
  await butler.start();
  const url = `http://127.0.0.1:${butler.port}`;
  try {
    model.enqueue({
      text: 'payments-api has failed its health checks since the 14:02 deploy. A restart needs an approver:',
      toolCalls: [
        {
          name: 'restart_service',
          arguments: JSON.stringify({
            service: 'payments-api',
            reason: 'health checks failing since the 14:02 deploy',
          }),
        },
      ],
    });
    const text = 'payments-api is down again, can you restart it?';
    // The reply's text ends first, then the card.
    const card = waitForCard(adapter);
    terminal += `ana › ${text}\n`;
    await butler.service.accept({
      kind: 'message',
      address: { platform: 'console', workspace: 'local', channel: 'terminal', thread: 'main' },
      messageId: 'screenshot-1',
      eventId: 'screenshot-1',
      dedupKey: 'screenshot-1',
      user: { id: 'ana', name: 'ana' },
      text,
      isMention: true,
      isDirect: true,
      sentAt: new Date().toISOString(),
    });
    await card;
    const capture = terminal.replace(ansi, '');
    writeFileSync(join(imagesDirectory, 'terminal-approval.txt'), capture);
    say(capture);

    const browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1100, height: 640 }, deviceScaleFactor: 1 });
      page.setDefaultTimeout(10_000);
      await page.goto(`${url}/console`);
      await page.getByLabel('API key').fill(approverKey);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.locator('#live-status[data-state="live"]').waitFor();
      await page.locator('#approvals-list article[data-approval-id]').waitFor();
      const path = join(imagesDirectory, 'console-approvals.png');
      await page.screenshot({ path });
      shrink(path);
      say(`wrote ${path}`);
    } finally {
      await browser.close();
    }
  } finally {
    await butler.stop(2_000);
    await model.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

async function waitForCard(adapter: ConsoleAdapter): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const end = await adapter.nextTurnEnd();
    if (end.kind === 'card') return;
  }
  throw new Error('no approval card within 10 s');
}

/** 256 colours lose nothing visible in a page of flat colours and text, and take a fraction of the bytes. */
function shrink(path: string): void {
  try {
    execFileSync('pngquant', ['--force', '--skip-if-larger', '--strip', '--output', path, '256', path]);
  } catch {
    say('pngquant not found (apt-get install -y pngquant): the PNG is left as Chromium wrote it');
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
