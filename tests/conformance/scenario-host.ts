import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createButler } from '../../src/app/index.js';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/core/contracts/logger.js';
import {
  type FakeModelServer,
  type RecordedRequest,
  type ScriptedReply,
  startFakeModelServer,
} from '../helpers/fake-model-server.js';
import { readEvents, type SseEvent } from '../helpers/sse-client.js';
import { CookieJar } from '../integration/mcp-oauth/oauth-butler.js';

/**
 * Butler as the MCP conformance suite's client under test. The suite runs a command per scenario with the
 * scenario's server URL (`thin-client.mjs`, which hands it here); this host runs a Butler for it, in this process,
 * started with that server in `mcpServers`, and drives it as a person would.
 * A key asks over the HTTP API for the server's first tool; a scripted model calls it (or `<server>__connect`
 * while no tool is known); every Connect link Butler sends is followed as a browser would (the page, its button,
 * the authorization server's redirect, the callback with the flow's cookie), a second key approves what
 * needs approval (the suite's tools say nothing of their risk, so they are high risk), and a form the server asks
 * for is accepted as shown (its defaults), until the turn ends.
 * The scenario passes on Butler's side when the turn ended with an answer. Scenario context (the suite's
 * `MCP_CONFORMANCE_CONTEXT`) gives pre-registered client credentials. Butlers run in the host, not in a process
 * each: a scenario then costs a Butler's start, not a Node process loading all of Butler first.
 */

const serverName = 'conformance';
const apiKey = 'conformance-key-0123456789abcdef';
const approverKey = 'conformance-approver-0123456789ab';
/** Links followed and cards approved in one run at most: a server that keeps asking does not make anyone loop. */
const maxWaits = 6;

/** What the suite asks for: one scenario's server, and its context. */
export interface ScenarioRun {
  scenario: string;
  serverUrl: string;
  context: Record<string, unknown>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
}

/** Arguments a tool's input schema accepts: a number for numbers, a word for strings. */
function argumentsFor(schema: unknown): Record<string, unknown> {
  const properties = (schema as { properties?: Record<string, { type?: string }> })?.properties ?? {};
  const sample = (type: string | undefined) =>
    type === 'number' || type === 'integer' ? 1 : type === 'boolean' ? true : 'conformance';
  return Object.fromEntries(
    Object.entries(properties).map(([name, property]) => [name, sample(property.type)]),
  );
}

/** The names of the tools the conversation has results of. */
function toolsAnswered(request: RecordedRequest): string[] {
  const names = new Map<string, string>();
  for (const message of request.messages)
    for (const call of (message.tool_calls as Array<{ id: string; function: { name: string } }>) ?? [])
      names.set(call.id, call.function.name);
  return request.messages.flatMap((message) =>
    message.role === 'tool' ? [names.get(String(message.tool_call_id)) ?? ''] : [],
  );
}

/** The person's model: call the server's first tool (connect first while none is known), then answer. */
function scriptedModel(request: RecordedRequest): ScriptedReply {
  if (toolsAnswered(request).some((name) => name !== `${serverName}__connect`)) return { text: 'Done.' };
  const tools = (request.tools ?? []).map(
    (tool) => (tool as { function: { name: string; parameters?: unknown } }).function,
  );
  const own = tools.filter((tool) => tool.name.startsWith(`${serverName}__`));
  const target = own.find((tool) => tool.name !== `${serverName}__connect`) ?? own[0];
  if (!target) return { text: 'The server offers no tool.' };
  return {
    toolCalls: [{ name: target.name, arguments: JSON.stringify(argumentsFor(target.parameters)) }],
  };
}

/** A browser that follows a Connect link to its end, keeping Butler's cookies; throws when a page refused. */
async function followLink(link: string): Promise<void> {
  const jar = new CookieJar();
  await (await fetch(link)).text();
  let answer = await fetch(link, { method: 'POST', redirect: 'manual' });
  // The authorization server signs the person in at once and redirects back (through as many hops as it takes).
  for (let hop = 0; hop < 6; hop++) {
    jar.take(answer);
    const location = answer.headers.get('location');
    if (!location) break;
    await answer.body?.cancel();
    answer = await fetch(new URL(location, answer.url || link), {
      redirect: 'manual',
      headers: jar.header(),
    });
  }
  if (!answer.ok) throw new Error(`the Connect flow ended on ${answer.status}: ${await answer.text()}`);
}

const turnEnds = (event: SseEvent) =>
  ['done', 'error', 'connection_required', 'confirm_required', 'input_required'].includes(
    String(event.data.type),
  );

/** Runs one scenario's Butler to the end of its turn; throws when the turn did not end with an answer. */
async function runScenario({ scenario, serverUrl, context }: ScenarioRun, template: string | undefined) {
  const model: FakeModelServer = await startFakeModelServer();
  model.setFallback(scriptedModel);
  const port = await freePort();
  const home = mkdtempSync(join(tmpdir(), 'butler-conformance-'));
  const oauth = scenario.startsWith('auth/')
    ? {
        identity: 'person',
        ...(typeof context.client_id === 'string' ? { clientId: context.client_id } : {}),
        ...(typeof context.client_secret === 'string' ? { clientSecret: context.client_secret } : {}),
        // The scenario expects the example clients' metadata document URL as the client id.
        ...(scenario === 'auth/basic-cimd'
          ? { clientMetadataUrl: 'https://conformance-test.local/client-metadata.json' }
          : {}),
      }
    : undefined;
  const configPath = join(home, 'butler.config.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      mcpServers: [{ name: serverName, url: serverUrl, ...(oauth ? { oauth } : {}), timeoutMs: 20_000 }],
      api: {
        keys: [
          { name: 'person', key: apiKey, scopes: ['chat'] },
          { name: 'approver', key: approverKey, scopes: ['approve'] },
        ],
      },
      // With no chat platform the terminal's counts as served: it needs an approver too.
      approvers: { api: ['approver'], console: ['approver'] },
      worker: { pollMilliseconds: 20 },
    }),
  );
  const env = {
    PORT: String(port),
    LOG_LEVEL: 'silent',
    BUTLER_CONFIG: configPath,
    BUTLER_BASE_URL: model.baseUrl,
    BUTLER_MODEL: 'conformance-model',
    BUTLER_PUBLIC_URL: `http://127.0.0.1:${port}`,
    BUTLER_SECRET_KEY: 'c'.repeat(64),
  };
  const dataDir = join(home, 'data');
  if (template) cpSync(template, join(dataDir, 'pglite'), { recursive: true });
  const butler = await createButler(loadConfig(env, home).config, {
    logger: silentLogger,
    listen: true,
    dataDir,
  });
  try {
    await butler.start();
    const butlerUrl = `http://127.0.0.1:${port}`;
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    let events = await readEvents(
      await fetch(`${butlerUrl}/api/v1/conversations/conformance/messages`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ text: `Use the ${serverName} server.` }),
      }),
    );
    for (let waits = 0; ; waits++) {
      const end = events.findLast(turnEnds);
      if (end?.data.type === 'done') return;
      if (end?.data.type === 'error') throw new Error(`the turn failed: ${String(end.data.error)}`);
      if (waits === maxWaits) throw new Error('the turn kept waiting');
      if (end?.data.type === 'input_required') {
        // The person accepts the form as shown: the fields left out take their defaults.
        await fetch(`${butlerUrl}/api/v1/inputs/${String(end.data.inputId)}`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ action: 'accept', content: {} }),
        });
      } else if (end?.data.type === 'confirm_required') {
        await fetch(`${butlerUrl}/api/v1/approvals/${String(end.data.approvalId)}/decision`, {
          method: 'POST',
          headers: { authorization: `Bearer ${approverKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ decision: 'approve' }),
        });
      } else {
        const link = events.findLast((event) => event.data.type === 'private_link')?.data.url;
        if (typeof link !== 'string') throw new Error('the turn ended without an answer');
        await followLink(link);
      }
      const after = events.at(-1)?.id ?? '0';
      events = await readEvents(
        await fetch(`${butlerUrl}/api/v1/conversations/conformance/events?after=${after}`, { headers }),
      );
    }
  } finally {
    await butler.stop(2_000);
    await model.close();
    rmSync(home, { recursive: true, force: true });
  }
}

/**
 * Serves `POST /run` (a `ScenarioRun`): answers 200 once the scenario's turn ended with an answer, 500 with why
 * not. `template`: a migrated PGlite data directory each Butler starts from a copy of.
 */
export async function startScenarioHost(template: string | undefined) {
  const server = createHttpServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += String(chunk);
    });
    request.on('end', () => {
      void runScenario(JSON.parse(body) as ScenarioRun, template).then(
        () => response.writeHead(200).end('ok'),
        (error: unknown) =>
          response.writeHead(500).end(error instanceof Error ? error.message : String(error)),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/run`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
