import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AccountMcpServer,
  ConnectionBook,
  parseSecretKey,
  SecretBox,
} from '../../../src/core/connections/index.js';
import { clientContext, tokensContext } from '../../../src/core/connections/stored-provider.js';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import type { Store } from '../../../src/core/contracts/store.js';
import { PeopleDirectory } from '../../../src/core/people/index.js';
import type { Tool } from '../../../src/core/tools/tool.js';
import { type OpenDatabase, openDatabase } from '../../../src/storage/database.js';
import { createStore } from '../../../src/storage/store.js';
import { openTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { testSettings } from '../../helpers/mcp-test-server.js';
import { openAuthorization } from '../../helpers/oauth-mcp-client.js';
import { type OAuthMcpServer, startOAuthMcpServer } from '../../helpers/oauth-mcp-server.js';
import { callAs, publicUrl, secretKey } from './oauth-butler.js';

/**
 * Refreshing people's tokens, against a strict provider that rotates refresh tokens and revokes the whole
 * grant when one is used twice: two Butler processes (two books over the same database) and three calls at
 * once after the access token expired make one refresh; a refresh the server refuses asks the person again.
 */

let database: TestDatabase;
let other: OpenDatabase | undefined;
let provider: OAuthMcpServer;
const alice = { platform: 'slack' as const, id: 'U0ALICE', name: 'alice' };
const box = new SecretBox([parseSecretKey(secretKey) ?? { id: 'none', key: Buffer.alloc(32) }]);

function process(store: Store) {
  const book = new ConnectionBook(
    store,
    box,
    new PeopleDirectory([]),
    [{ name: 'tickets', url: provider.url, oauth: { identity: 'person' } }],
    {
      publicUrl,
      linkTtlMs: 600_000,
      deadlines: { requestMs: 5_000, pageMs: 10_000, refreshMs: 10_000 },
      maxResponseBytes: 1_048_576,
    },
    silentLogger,
  );
  const settings = testSettings(
    'tickets',
    { kind: 'http', url: provider.url, headers: {} },
    { oauth: { identity: 'person' } },
  );
  return {
    store,
    book,
    server: new AccountMcpServer(
      { ...settings, transport: { kind: 'http', url: provider.url, headers: {} } },
      book,
      silentLogger,
    ),
  };
}

let first: ReturnType<typeof process>;
let second: ReturnType<typeof process>;

beforeAll(async () => {
  provider = await startOAuthMcpServer({ slowTokenEndpointMs: 150 });
  database = await openTestDatabase();
  // On Postgres the second process has connections of its own; PGlite belongs to one process, so it shares it.
  other = database.url
    ? await openDatabase({ url: database.url, dataDir: '', logger: silentLogger })
    : undefined;
  first = process(createStore(database.db));
  second = process(createStore((other ?? database).db));
  await Promise.all([first.server.start(), second.server.start()]);
  // Alice connects through the first process.
  const owner = first.book.ownerFor('tickets', alice);
  const link = await first.book.offerLink('tickets', owner);
  const opened = await first.book.openLink(link.url.split('/connect/')[1] ?? '');
  if (!opened.ok) throw new Error(opened.reason);
  const back = await openAuthorization(opened.url, 'alice@tickets');
  const done = await first.book.complete({
    state: back.searchParams.get('state') ?? '',
    code: back.searchParams.get('code') ?? '',
    browserSecret: (flowId) => (flowId === opened.flowId ? opened.browserSecret : undefined),
  });
  expect(done).toMatchObject({ ok: true, server: 'tickets' });
  await second.server.whenSettled();
});
afterAll(async () => {
  await Promise.all([first?.server.stop(), second?.server.stop()]);
  await other?.close();
  await database?.close();
  await provider?.close();
});

const whoami = (source: { tools(): readonly Tool[] }) => {
  const tool = source.tools().find((candidate) => candidate.name === 'tickets__whoami');
  if (!tool) throw new Error('whoami is not offered');
  return tool;
};

const asAlice = (tool: Tool) => callAs(tool, alice);

describe('refreshing people’s tokens', () => {
  it('lists the tools in every process once anyone connected', () => {
    expect(first.server.tools().map((tool) => tool.name)).toEqual(
      second.server.tools().map((tool) => tool.name),
    );
    expect(whoami(second.server).connection).toEqual({ server: 'tickets', identity: 'person' });
  });

  it('refreshes once for three calls at once in two processes after the access token expired', async () => {
    provider.expireAccessTokens();
    const before = provider.stats();
    const answers = await Promise.all([
      asAlice(whoami(first.server)),
      asAlice(whoami(first.server)),
      asAlice(whoami(second.server)),
    ]);
    expect(answers.map(String)).toEqual(['alice@tickets', 'alice@tickets', 'alice@tickets']);
    expect(provider.stats().refreshes - before.refreshes).toBe(1);
    expect(provider.stats().refreshReuses).toBe(before.refreshReuses);
  });

  it('asks the person to connect again when the server refuses the refresh', async () => {
    // The provider revokes the grant (as it does when a refresh token is used twice).
    const record = await first.book.get('tickets', 'slack:U0ALICE');
    const tokens = JSON.parse(
      box.open(record?.tokens ?? { keyId: '', value: '' }, tokensContext('tickets', 'slack:U0ALICE')),
    );
    const revoked = await fetch(new URL('/revoke', provider.issuer), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: tokens.refresh_token, client_id: await clientId() }),
    });
    expect(revoked.status).toBe(200);
    await expect(asAlice(whoami(first.server))).rejects.toThrow(/connect/);
    expect(await first.book.get('tickets', 'slack:U0ALICE')).toBeUndefined();
    expect(await first.book.readiness({ server: 'tickets', identity: 'person' }, [alice])).toMatchObject({
      status: 'missing',
      owner: { key: 'slack:U0ALICE' },
    });
  });
});

async function clientId(): Promise<string> {
  const state = await first.store.connections.serverState('tickets');
  const client = JSON.parse(box.open(state?.client ?? { keyId: '', value: '' }, clientContext('tickets')));
  return client.client_id;
}
