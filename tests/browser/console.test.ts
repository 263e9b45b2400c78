import { existsSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestButler, type TestButler } from '../helpers/butler-app.js';
import { type FakeModelServer, startFakeModelServer } from '../helpers/fake-model-server.js';
import { readEvents } from '../helpers/sse-client.js';
import { startToolServer, type ToolServer } from '../helpers/tool-server.js';

/**
 * The admin console in a real browser: Debian's headless Chromium driven by playwright-core, against the
 * real Butler (its HTTP server serves the console and the API on one origin) with a fake model server.
 */

const chromiumPath = '/usr/bin/chromium';
const hasChromium = existsSync(chromiumPath);
const screenshotPath = join(tmpdir(), 'butler-console.png');

const keys = {
  oncall: 'oncall-console-key-0123456789',
  auditor: 'auditor-console-key-0123456789',
  ci: 'ci-console-key-0123456789',
  ana: 'ana-console-key-0123456789',
  acme: 'acme-console-key-0123456789',
};

let model: FakeModelServer;
let tools: ToolServer;
let app: TestButler;
let browser: Browser;

/** A raw request, so that the path reaches the server as written (fetch would normalise `..`). */
function rawRequest(path: string, method = 'GET') {
  const url = new URL(app.url);
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>(
    (resolve, reject) => {
      const request = httpRequest({ host: url.hostname, port: url.port, path, method }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
        );
      });
      request.on('error', reject);
      request.end();
    },
  );
}

/** A fresh browser context (its own session storage), with the page's errors collected. */
async function openConsole(): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // Refused requests are logged by the browser itself; the page shows them, which is what is tested.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      problems.push(`console: ${message.text()}`);
  });
  await page.goto(`${app.url}/console`);
  return { page, problems };
}

/** Another system asks for a call (a high-risk restart unless told) over the API: the turn parks on an approval. */
async function askForRestart(conversation: string, service = 'api', key = keys.ci, tool = 'restart_service') {
  model.enqueue({ toolCalls: [{ name: tool, arguments: JSON.stringify({ service }) }] });
  const events = await readEvents(
    await fetch(`${app.url}/api/v1/conversations/${conversation}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'restart api' }),
    }),
  );
  return events.at(-1)?.data;
}

/** The key as the page keeps it (an expression, run in the page). */
const storedKey = (page: Page) => page.evaluate('sessionStorage.getItem("butler.console.key")');

async function signIn(page: Page, key: string) {
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

beforeAll(async () => {
  if (!hasChromium) return;
  model = await startFakeModelServer();
  tools = await startToolServer();
  app = await startTestButler({
    env: {
      BUTLER_BASE_URL: model.baseUrl,
      BUTLER_MODEL: 'test-model',
      KEY_ONCALL: keys.oncall,
      KEY_AUDITOR: keys.auditor,
      KEY_CI: keys.ci,
      KEY_ANA: keys.ana,
      KEY_ACME: keys.acme,
    },
    config: {
      approvers: { console: ['olga'], api: ['oncall', 'auditor'] },
      // Only rotate_keys is medium risk here: the other tests' high-risk calls need one approver.
      approvalPolicy: { quorum: { medium: 2 } },
      budgets: [
        { scope: 'workspace', platform: 'api', id: 'ci-bot', name: 'the CI bot', tokensPerDay: 1_000_000 },
      ],
      tools: [
        {
          name: 'restart_service',
          description: 'Restarts a service.',
          risk: 'high',
          input: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
          http: { method: 'POST', url: `${tools.url}/restart_service` },
        },
        {
          name: 'rotate_keys',
          description: 'Rotates the keys of a service.',
          risk: 'medium',
          input: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
          http: { method: 'POST', url: `${tools.url}/rotate_keys` },
        },
      ],
      api: {
        keys: [
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
          { name: 'oncall', key: '${KEY_ONCALL}', scopes: ['chat', 'approve', 'read'] },
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
          { name: 'auditor', key: '${KEY_AUDITOR}', scopes: ['approve', 'read'] },
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
          { name: 'ci-bot', key: '${KEY_CI}', scopes: ['chat', 'read'] },
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
          { name: 'ana', key: '${KEY_ANA}', scopes: ['chat'] },
          // biome-ignore lint/suspicious/noTemplateCurlyInString: Butler's own ${VAR} interpolation.
          { name: 'acme', key: '${KEY_ACME}', scopes: ['read'], tenants: ['slack:T0ACME0001'] },
        ],
      },
    },
  });
  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
  await model?.close();
  await tools?.close();
});
beforeEach(() => {
  model?.reset();
  if (tools) tools.requests.length = 0;
});

describe.skipIf(!hasChromium)('admin console in headless Chromium', () => {
  it('serves only its own files, with a strict content security policy', async () => {
    const redirect = await rawRequest('/console');
    expect(redirect.status).toBe(308);
    expect(redirect.headers.location).toBe('console/');

    const page = await rawRequest('/console/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    expect(page.body).toContain('<title>Butler console</title>');
    expect((await rawRequest('/console/app.js')).headers['content-type']).toBe(
      'text/javascript; charset=utf-8',
    );
    expect((await rawRequest('/console/style.css')).headers['content-type']).toBe('text/css; charset=utf-8');

    const head = await rawRequest('/console/app.js', 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    for (const path of ['/console/..%2fpackage.json', '/console/%2e%2e/package.json', '/console/nope.js'])
      expect((await rawRequest(path)).status, path).toBe(404);
    expect((await rawRequest('/console/../package.json')).status).toBe(404);
    expect((await rawRequest('/console/', 'POST')).status).toBe(405);
  });

  it('says plainly when the key is wrong, and keeps the key out of the URL', async () => {
    const { page, problems } = await openConsole();
    await signIn(page, 'not-a-real-key-0123456789');
    const error = page.locator('#sign-in-error');
    await error.filter({ hasText: '401' }).waitFor();
    expect(await error.textContent()).toContain('The key was refused');
    expect(await page.locator('#workspace').isHidden()).toBe(true);
    expect(page.url()).not.toContain('not-a-real-key');
    expect(await storedKey(page)).toBeNull();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('gives a key limited to tenants only what narrows to them, and nothing it would be refused', async () => {
    const { page, problems } = await openConsole();
    await signIn(page, keys.acme);
    await page.locator('#identity').filter({ hasText: 'tenants: slack:T0ACME0001' }).waitFor();
    for (const tab of ['approvals', 'conversations', 'usage'])
      expect(await page.locator(`#tab-${tab}`).isVisible(), tab).toBe(true);
    for (const tab of ['audit', 'schedules'])
      expect(await page.locator(`#tab-${tab}`).isHidden(), tab).toBe(true);
    await page.locator('#tab-usage').click();
    expect(await page.locator('#feedback').isHidden()).toBe(true);
    expect(await page.locator('#live-status').textContent()).toBe('Live events: not available for this key');
    // No panel asked for what serves every tenant: no 403 anywhere on the page.
    expect(await page.locator('body').textContent()).not.toContain('403');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('shows a pending approval live, approves it, then shows the audit row and the usage chart', async () => {
    const { page, problems } = await openConsole();
    await signIn(page, keys.oncall);
    await page.locator('#live-status[data-state="live"]').waitFor();
    expect(await storedKey(page)).toBe(keys.oncall);
    expect(page.url()).not.toContain(keys.oncall);
    await page.locator('#approvals-list', { hasText: 'No pending approvals' }).waitFor();

    const confirm = await askForRestart('deploy-console');
    expect(confirm).toMatchObject({ type: 'confirm_required', tool: 'restart_service', risk: 'high' });

    // It appears without a reload, from the live events stream.
    const card = page.locator(`article[data-approval-id="${String(confirm?.approvalId)}"]`);
    await card.waitFor();
    expect(await card.textContent()).toContain('restart_service');
    expect(await card.textContent()).toContain('ci-bot');
    expect(await page.getByRole('tab', { name: /Approvals/ }).textContent()).toContain('1 pending');
    await page.screenshot({ path: screenshotPath, fullPage: true });

    model.enqueue({ text: 'Restarted api.' });
    await card.getByRole('button', { name: 'Approve', exact: true }).click();
    await card.waitFor({ state: 'detached' });
    await page
      .locator('#approvals-status-line', { hasText: /Approved restart_service|restart_service was approved/ })
      .waitFor();
    await app.settle();
    expect(tools.requests.map((request) => request.path)).toEqual(['/restart_service']);
    // The key's name is shown, and a decided card says what came of it.
    expect(await page.locator('#identity').textContent()).toContain('Signed in as oncall');
    await page.locator('#approvals-status').selectOption('approved');
    const decided = page.locator(`article[data-approval-id="${String(confirm?.approvalId)}"]`);
    await decided.waitFor();
    expect(await decided.textContent()).toMatch(/Outcome\s*ran, succeeded/);
    await page.locator('#approvals-status').selectOption('pending');

    // Tabs follow the keyboard: arrow keys move between them.
    await page.getByRole('tab', { name: /Approvals/ }).focus();
    await page.keyboard.press('ArrowRight');
    expect(await page.getByRole('tab', { name: 'Audit' }).getAttribute('aria-selected')).toBe('true');
    const row = page.locator('#audit-rows tr[data-tool="restart_service"]');
    await row.waitFor();
    expect(await row.textContent()).toMatch(/approved.*succeeded.*ci-bot.*oncall/);

    await page.getByRole('tab', { name: 'Usage' }).click();
    // Where the CI bot's daily budget stands, above the chart.
    const budget = page.locator('#budget-rows tr[data-budget="workspace:api:ci-bot"]');
    await budget.waitFor();
    expect(await budget.textContent()).toMatch(
      /the CI bot.*1,000,000 tokens today.*\d tokens.*\d+%.*stops answering/,
    );
    expect(await budget.getAttribute('data-state')).toBe('ok');
    const bars = page.locator('#usage-chart svg rect.bar');
    await bars.first().waitFor();
    expect(await bars.count()).toBeGreaterThan(0);
    expect(await page.locator('#usage-rows tr').count()).toBeGreaterThan(0);

    expect(problems).toEqual([]);
    await page.context().close();
  }, 30_000);

  it("opens on the request a card's console link names, with its whole arguments, after sign-in", async () => {
    // Longer than any card shows (1,500 characters), with what a card would escape.
    const service = `api-${'<&>"'.repeat(800)}-end`;
    const confirm = await askForRestart('linked-request', service);
    const approvalId = String(confirm?.approvalId);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    await page.goto(`${app.url}/console#approval=${approvalId}`);
    await signIn(page, keys.oncall);

    const request = page.locator('#approval-request');
    const shown = request.locator(`article[data-request-call="${approvalId}"] pre.arguments`);
    await shown.waitFor();
    expect(await shown.textContent()).toBe(JSON.stringify({ service }, null, 2));
    expect(await page.getByRole('tab', { name: /Approvals/ }).getAttribute('aria-selected')).toBe('true');

    // The whole card of the request, read by its batch id, over the same API.
    const listed = (await (
      await fetch(`${app.url}/api/v1/approvals?status=pending`, {
        headers: { authorization: `Bearer ${keys.oncall}` },
      })
    ).json()) as { items: Array<{ id: string; batchId: string }> };
    const batchId = listed.items.find((item) => item.id === approvalId)?.batchId;
    const batch = (await (
      await fetch(`${app.url}/api/v1/approval-batches/${batchId}`, {
        headers: { authorization: `Bearer ${keys.oncall}` },
      })
    ).json()) as { calls: Array<{ approvalId: string; argumentsJson: string }> };
    expect(batch.calls).toEqual([
      expect.objectContaining({ approvalId, argumentsJson: JSON.stringify({ service }, null, 2) }),
    ]);

    // Decided from there, it runs once, and the request shows the outcome.
    model.enqueue({ text: 'Restarted.' });
    await request.getByRole('button', { name: 'Approve', exact: true }).click();
    await request.locator(`article[data-request-call="${approvalId}"][data-status="approved"]`).waitFor();
    await app.settle();
    expect(tools.requests.map((each) => each.body)).toEqual([{ service }]);
    expect(problems).toEqual([]);
    await context.close();
  }, 30_000);

  it('keeps a half-written rejection through a live refresh, then rejects with its reason', async () => {
    const { page, problems } = await openConsole();
    await signIn(page, keys.oncall);
    await page.locator('#live-status[data-state="live"]').waitFor();
    const first = await askForRestart('freeze-1');
    const card = page.locator(`article[data-approval-id="${String(first?.approvalId)}"]`);
    await card.getByRole('button', { name: 'Reject…' }).click();
    const reason = card.getByLabel('Reason for rejecting (optional)');
    await reason.pressSequentially('deploy freeze');

    // A second approval arrives while the reason is being typed: the list updates around the open form.
    const second = await askForRestart('freeze-2');
    await page.locator(`article[data-approval-id="${String(second?.approvalId)}"]`).waitFor();
    expect(await reason.inputValue()).toBe('deploy freeze');
    expect(await reason.evaluate((input) => input === input.ownerDocument.activeElement)).toBe(true);

    await page.keyboard.press('Enter');
    await card.waitFor({ state: 'detached' });
    const rejected = (await (
      await fetch(`${app.url}/api/v1/approvals?status=rejected`, {
        headers: { authorization: `Bearer ${keys.oncall}` },
      })
    ).json()) as { items: Array<{ id: string; reason: string | null }> };
    expect(rejected.items).toEqual([
      expect.objectContaining({ id: first?.approvalId, reason: 'deploy freeze' }),
    ]);
    // The keyboard lands on the card now in its place, not on a button that could decide it.
    await page.waitForFunction(
      `document.activeElement?.dataset?.approvalId === ${JSON.stringify(second?.approvalId)}`,
    );
    expect(problems).toEqual([]);
    await page.context().close();
  }, 30_000);

  it('downloads a file Butler sent in the chat, with the key and the bytes it was sent with', async () => {
    const csv = 'service,errors\napi,12\n';
    model.enqueue(
      {
        toolCalls: [
          { name: 'attach_file', arguments: JSON.stringify({ filename: 'errors.csv', content: csv }) },
        ],
      },
      { text: 'Attached.' },
    );
    const { page, problems } = await openConsole();
    await signIn(page, keys.ci);
    await page.locator('#tab-chat').click();
    await page.getByLabel('Message').fill('send me the errors as a CSV');
    await page.getByRole('button', { name: 'Send' }).click();
    const button = page.getByRole('button', { name: /^Download errors\.csv/ });
    // A whole turn (the model, the tool, the file stored and streamed): on a busy machine, more than Playwright's 10 s.
    await button.waitFor({ timeout: 25_000 });
    const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
    expect(download.suggestedFilename()).toBe('errors.csv');
    const stream = await download.createReadStream();
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString('utf8')).toBe(csv);
    expect(problems).toEqual([]);
    await page.context().close();
  }, 30_000);

  it('lists scheduled tasks with where, who and when, and pauses and cancels them', async () => {
    const made = await fetch(`${app.url}/api/v1/schedules`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.ci}`, 'content-type': 'application/json' },
      body: JSON.stringify({ conversationId: 'digests', prompt: 'Post the digest', cron: '0 9 * * 1-5' }),
    });
    const digest = ((await made.json()) as { id: string }).id;
    const { schedule: reminder } = await app.butler.schedules.create({
      creator: { platform: 'console', id: 'olga', name: 'Olga' },
      address: { platform: 'console', workspace: 'local', channel: 'ops', thread: 't1' },
      prompt: 'Remind me to check the deploy',
      at: 'PT1H',
      isDirect: false,
      source: 'chat',
    });
    const { page, problems } = await openConsole();
    await signIn(page, keys.oncall);
    await page.getByRole('tab', { name: 'Schedules' }).click();
    const digestRow = page.locator(`tr[data-schedule-id="${digest}"]`);
    const reminderRow = page.locator(`tr[data-schedule-id="${reminder.id}"]`);
    await digestRow.waitFor();
    expect(await digestRow.textContent()).toMatch(
      /Post the digest.*api: ci-bot \/ digests.*ci-bot \(api\).*active.*0 9 \* \* 1-5/,
    );
    expect(await reminderRow.textContent()).toMatch(
      /Remind me to check the deploy.*console: local \/ ops \/ t1.*Olga \(console\).*once/,
    );

    await reminderRow.getByRole('button', { name: 'Pause' }).click();
    await page.locator(`tr[data-schedule-id="${reminder.id}"][data-status="paused"]`).waitFor();
    expect(await reminderRow.textContent()).toContain('paused by oncall');
    page.once('dialog', (dialog) => void dialog.accept());
    await digestRow.getByRole('button', { name: 'Cancel' }).click();
    await digestRow.waitFor({ state: 'detached' });
    await page
      .locator('#schedules-status-line', { hasText: 'Task "Post the digest" is cancelled now.' })
      .waitFor();
    expect(await app.butler.schedules.get(digest)).toMatchObject({
      status: 'cancelled',
      statusNote: 'cancelled by oncall',
    });
    expect(problems).toEqual([]);
    await page.context().close();
  }, 30_000);

  it('counts a two-person approval from two consoles: the second sees the first live, keeping a half-written rejection, and it runs once', async () => {
    const oncall = await openConsole();
    await signIn(oncall.page, keys.oncall);
    const auditor = await openConsole();
    await signIn(auditor.page, keys.auditor);
    for (const { page } of [oncall, auditor]) await page.locator('#live-status[data-state="live"]').waitFor();

    const confirm = await askForRestart('rotate-console', 'billing', keys.ci, 'rotate_keys');
    expect(confirm).toMatchObject({ type: 'confirm_required', tool: 'rotate_keys', risk: 'medium' });
    const cardIn = (page: Page) => page.locator(`article[data-approval-id="${String(confirm?.approvalId)}"]`);
    await cardIn(auditor.page)
      .filter({ hasText: /Approvals\s*0 of 2/ })
      .waitFor();
    // The auditor starts writing a rejection meanwhile.
    const reason = cardIn(auditor.page).getByLabel('Reason for rejecting (optional)');
    await cardIn(auditor.page).getByRole('button', { name: 'Reject…' }).click();
    await reason.fill('Wait until the freeze ends');

    await cardIn(oncall.page).getByRole('button', { name: 'Approve', exact: true }).click();
    // What the decision answered, or the live event of it when that came after.
    await oncall.page
      .locator('#approvals-status-line', {
        hasText:
          /Your approval is counted: it waits for another approver|oncall approved rotate_keys: 1 of 2/,
      })
      .waitFor();
    // Still waiting, redrawn with the approval it has, and no second Approve for the one who gave it.
    const counted = cardIn(oncall.page).filter({ hasText: /Approvals\s*1 of 2: oncall/ });
    await counted.waitFor();
    expect(await counted.textContent()).toContain('You cannot decide this one: You approved it already');
    expect(await counted.getByRole('button', { name: 'Approve', exact: true }).count()).toBe(0);
    expect(tools.requests).toEqual([]);

    // The other console hears of it from the live events, without a reload.
    await auditor.page
      .locator('#approvals-status-line', { hasText: 'oncall approved rotate_keys: 1 of 2 approvals' })
      .waitFor();
    const waiting = cardIn(auditor.page).filter({ hasText: /Approvals\s*1 of 2: oncall/ });
    await waiting.waitFor();
    // The card was updated in place: the half-written rejection is still there. The auditor thinks again.
    expect(await reason.inputValue()).toBe('Wait until the freeze ends');
    await waiting.getByRole('button', { name: 'Cancel' }).click();
    model.enqueue({ text: 'Rotated the billing keys.' });
    await waiting.getByRole('button', { name: 'Approve', exact: true }).click();
    await cardIn(auditor.page).waitFor({ state: 'detached' });
    await cardIn(oncall.page).waitFor({ state: 'detached' });
    await app.settle();
    expect(tools.requests.map((request) => request.path)).toEqual(['/rotate_keys']);

    await auditor.page.locator('#approvals-status').selectOption('approved');
    const decided = cardIn(auditor.page);
    await decided.waitFor();
    expect(await decided.textContent()).toMatch(/Approvals\s*2 of 2: oncall, auditor/);
    expect(await decided.textContent()).toMatch(/Outcome\s*ran, succeeded/);
    expect([...oncall.problems, ...auditor.problems]).toEqual([]);
    await oncall.page.context().close();
    await auditor.page.context().close();
  }, 40_000);

  // Near the end: its request stays pending, which the tests above would see.
  it('offers no Approve in the chat for a high-risk call the signed-in key asked for, and says who decides', async () => {
    model.enqueue({ toolCalls: [{ name: 'restart_service', arguments: '{"service":"chat-own"}' }] });
    const { page, problems } = await openConsole();
    await signIn(page, keys.oncall);
    await page.locator('#tab-chat').click();
    await page.getByLabel('Message').fill('restart chat-own');
    await page.getByRole('button', { name: 'Send' }).click();
    const card = page.locator('#chat-transcript [data-approval-id]');
    await card.waitFor();
    expect(await card.getByRole('button', { name: 'Approve', exact: true }).count()).toBe(0);
    expect(await card.textContent()).toContain('High risk: an approver other than you decides.');
    expect(problems).toEqual([]);
    await page.context().close();
  }, 30_000);

  it('shows a chat-only key the rest of its turn once another key approved it (the README demo)', async () => {
    model.enqueue(
      { toolCalls: [{ name: 'restart_service', arguments: '{"service":"payments-api"}' }] },
      { text: 'payments-api is back up.' },
    );
    const { page, problems } = await openConsole();
    await signIn(page, keys.ana);
    await page.locator('#tab-chat').click();
    await page.getByLabel('Message').fill('restart payments-api');
    await page.getByRole('button', { name: 'Send' }).click();
    const card = page.locator('#chat-transcript [data-approval-id]');
    await card.waitFor();
    const approvalId = await card.getAttribute('data-approval-id');
    // Ana's key has no `read`: no live events. Another key decides elsewhere.
    const decided = await fetch(`${app.url}/api/v1/approvals/${approvalId}/decision`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.auditor}`, 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(decided.status).toBe(200);
    await page.locator('#chat-transcript').getByText('payments-api is back up.').waitFor();
    await page.locator('#chat-status-line').getByText('Reply finished').waitFor();
    expect(tools.requests.map((request) => request.path)).toEqual(['/restart_service']);
    expect(problems).toEqual([]);
    await page.context().close();
  }, 30_000);

  it('narrows approvals, conversations and usage to the tenant picked in the header', async () => {
    for (const tenant of ['tenant_east', 'tenant_west'])
      await app.butler.store.feishuTenants.claim(tenant, 'cli_e0e0e0e0e0e0e0e0');
    const { page, problems } = await openConsole();
    const asked: string[] = [];
    page.on('request', (request) => asked.push(request.url()));
    await signIn(page, keys.auditor);
    const picker = page.getByLabel('Tenant');
    await picker.waitFor();
    expect(await picker.locator('option').allTextContents()).toEqual([
      'All tenants',
      'feishu:tenant_east',
      'feishu:tenant_west',
    ]);
    asked.length = 0;
    await picker.selectOption('feishu:tenant_west');
    const narrowed = (path: string) =>
      asked.some((url) => url.includes(`/api/v1${path}`) && url.includes('tenant=feishu%3Atenant_west'));
    await expect.poll(() => narrowed('/approvals'), { timeout: 10_000 }).toBe(true);
    // Nothing of the tenant is pending, whatever the other tests left in the others.
    await expect.poll(() => page.locator('article[data-approval-id]').count(), { timeout: 10_000 }).toBe(0);
    await page.locator('#tab-conversations').click();
    await expect.poll(() => narrowed('/conversations'), { timeout: 10_000 }).toBe(true);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  // Last: its request stays pending (no key here may decide it), which the tests above would see.
  it('offers no Approve to a key that may not decide, and says why', async () => {
    // oncall asks itself: a high-risk call needs an approver other than the one who asked.
    const confirm = await askForRestart('own-request', 'api', keys.oncall);
    const { page, problems } = await openConsole();
    await signIn(page, keys.oncall);
    const card = page.locator(`article[data-approval-id="${String(confirm?.approvalId)}"]`);
    await card.waitFor();
    expect(await card.getByRole('button', { name: 'Approve', exact: true }).count()).toBe(0);
    expect(await card.textContent()).toContain(
      'You cannot decide this one: High-risk actions need an approver other than the person who asked.',
    );
    expect(problems).toEqual([]);
    await page.context().close();
  }, 30_000);
});

if (!hasChromium)
  describe('admin console', () => {
    it.skip(`needs Chromium at ${chromiumPath} (apt-get install -y chromium)`, () => {});
  });
