import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AccountMcpServer,
  ConnectionBook,
  parseSecretKey,
  SecretBox,
} from '../../../src/core/connections/index.js';
import { oauthFetch } from '../../../src/core/connections/oauth-fetch.js';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import { PeopleDirectory } from '../../../src/core/people/index.js';
import { createStore } from '../../../src/storage/store.js';
import { openTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { testSettings } from '../../helpers/mcp-test-server.js';
import { openAuthorization } from '../../helpers/oauth-mcp-client.js';
import { type OAuthMcpServer, startOAuthMcpServer } from '../../helpers/oauth-mcp-server.js';
import { callAs, publicUrl, secretKey } from './oauth-butler.js';

/**
 * No OAuth request holds Butler or grows it: every request Butler makes for a connection (discovery, registration,
 * token, refresh, revocation) has a deadline and a size cap, a whole Connect page has a deadline, a stalled
 * refresh ends the call, and an authorization server on an internal address is refused unless the MCP server is
 * on one too. The deadlines here are short stand-ins for the real ones (15 s a request, 20 s a page, 30 s a call).
 */

const deadlines = { requestMs: 400, pageMs: 900, refreshMs: 700 };
const maxResponseBytes = 1_048_576;
const alice = { platform: 'slack' as const, id: 'U0ALICE', name: 'alice' };
const box = new SecretBox([parseSecretKey(secretKey) ?? { id: 'none', key: Buffer.alloc(32) }]);
let database: TestDatabase;

/** A server that plays an MCP server and its authorization server, each answer decided by the test. */
async function playground(answer: (path: string, response: ServerResponse, origin: string) => void) {
  const server: Server = createServer((request, response) =>
    answer(new URL(request.url ?? '/', 'http://x').pathname, response, origin),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/mcp`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function bookFor(url: string) {
  return new ConnectionBook(
    createStore(database.db),
    box,
    new PeopleDirectory([]),
    [{ name: 'tickets', url, oauth: { identity: 'person' } }],
    { publicUrl, linkTtlMs: 600_000, deadlines, maxResponseBytes },
    silentLogger,
  );
}

async function openLinkOf(book: ConnectionBook) {
  const link = await book.offerLink('tickets', book.ownerFor('tickets', alice));
  return book.openLink(link.url.split('/connect/')[1] ?? '');
}

/** How long `work` took to settle, and its error. */
async function timed(work: Promise<unknown>) {
  const started = Date.now();
  const error = await work.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  return { ms: Date.now() - started, error: error instanceof Error ? error.message : String(error) };
}

beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => {
  await database?.close();
});

describe('OAuth requests under deadlines and size caps', () => {
  it('ends a Connect page whose discovery never answers at the page deadline', async () => {
    const silent = await playground(() => {});
    try {
      const outcome = await timed(openLinkOf(bookFor(silent.url)));
      expect(outcome.error).toMatch(/did not answer in time/);
      expect(outcome.ms).toBeLessThan(deadlines.pageMs + 2_000);
    } finally {
      await silent.close();
    }
  });

  it('stops reading authorization server metadata past 1 MB, however much is sent', async () => {
    let sent = 0;
    let closed = false;
    const endless = await playground((path, response, origin) => {
      if (path.startsWith('/.well-known/oauth-protected-resource')) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ resource: `${origin}/mcp`, authorization_servers: [origin] }));
        return;
      }
      if (!path.startsWith('/.well-known/oauth-authorization-server')) {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.on('close', () => {
        closed = true;
      });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const more = () => {
        while (!closed && sent < 300 * 1024 * 1024) {
          sent += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', more);
        }
      };
      response.write('{"issuer":"');
      more();
    });
    try {
      const outcome = await timed(openLinkOf(bookFor(endless.url)));
      expect(outcome.error).toMatch(/larger than 1\.0 MB/);
      await expect.poll(() => closed).toBe(true);
      // What the socket buffers took on top of the cap before the close reached the server.
      expect(sent).toBeLessThan(32 * 1024 * 1024);
    } finally {
      await endless.close();
    }
  });

  describe('a refresh that stalls', () => {
    let provider: OAuthMcpServer;
    let book: ConnectionBook;
    let server: AccountMcpServer;

    beforeAll(async () => {
      // Tokens that live 30 s are due for a refresh at once (Butler refreshes a minute ahead).
      provider = await startOAuthMcpServer({ accessTokenTtlSeconds: 30 });
      book = bookFor(provider.url);
      server = new AccountMcpServer(
        {
          ...testSettings('tickets', { kind: 'http', url: provider.url, headers: {} }, {}),
          transport: { kind: 'http', url: provider.url, headers: {} },
          oauth: { identity: 'person' },
        },
        book,
        silentLogger,
      );
      await server.start();
      const opened = await openLinkOf(book);
      if (!opened.ok) throw new Error(opened.reason);
      const back = await openAuthorization(opened.url, 'alice@tickets');
      await book.complete({
        state: back.searchParams.get('state') ?? '',
        code: back.searchParams.get('code') ?? '',
        browserSecret: () => opened.browserSecret,
      });
    });
    afterAll(async () => {
      await server?.stop();
      await provider?.close();
    });

    it('ends the call with an error by the refresh deadline', async () => {
      const whoami = server.tools().find((tool) => tool.name === 'tickets__whoami');
      if (!whoami) throw new Error('whoami is not offered');
      const call = () => callAs(whoami, alice);
      // The call refreshes first, and the token endpoint stalls.
      provider.delayTokenResponses(60_000);
      const stalled = await timed(call());
      expect(stalled.error).toMatch(/did not answer in time|did not end in time/);
      expect(stalled.ms).toBeLessThan(deadlines.refreshMs + 2_000);
      // This provider spent the refresh token it never delivered: the person connects again.
      provider.delayTokenResponses(0);
      await expect(call()).rejects.toThrow(/Butler sends a new link to connect/);
    });
  });
});

describe('where OAuth requests may go', () => {
  /** Names resolve as the test says; nothing is looked up in DNS. */
  const names: Record<string, string> = {
    'mcp.example.com': '203.0.113.10',
    'auth.example.com': '203.0.113.20',
    'intranet.example.com': '10.0.0.7',
    'rebinding.example.com': '127.0.0.1',
    'mapped.example.com': '::ffff:192.168.1.1',
  };
  const lookup: LookupFunction = (hostname, _options, callback) => {
    const address = names[hostname];
    if (!address) return callback(new Error(`no such name ${hostname}`), '', 0);
    (callback as unknown as (error: null, all: Array<{ address: string; family: number }>) => void)(null, [
      { address, family: address.includes(':') ? 6 : 4 },
    ]);
  };
  const fetchFor = (serverUrl: string) =>
    oauthFetch({ serverUrl, requestDeadlineMs: 2_000, maxResponseBytes, lookup });

  it('refuses internal addresses, by literal or by name, when the MCP server is public', async () => {
    const fromPublic = fetchFor('https://mcp.example.com/mcp');
    for (const target of [
      'https://127.0.0.1/.well-known/oauth-authorization-server',
      'https://[::1]/token',
      'https://[fd00::1]/token',
      'https://169.254.169.254/latest/meta-data',
      'https://intranet.example.com/.well-known/openid-configuration',
      'https://rebinding.example.com/register',
      'https://mapped.example.com/token',
    ])
      await expect(fromPublic(target), target).rejects.toThrow(/internal network address/);
    await expect(fromPublic('http://auth.example.com/token')).rejects.toThrow(/not https/);
  });

  it('lets an MCP server on loopback name an authorization server on loopback, over http', async () => {
    const local = await playground((_path, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"issuer":"x"}');
    });
    try {
      const answer = await fetchFor(local.url)(
        local.url.replace('/mcp', '/.well-known/oauth-authorization-server'),
      );
      expect(await answer.json()).toEqual({ issuer: 'x' });
    } finally {
      await local.close();
    }
  });
});
