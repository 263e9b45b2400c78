import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import { type OpenDatabase, openDatabase, poolerNote } from '../../../src/storage/database.js';
import {
  createPostgresDatabase,
  dropPostgresDatabase,
  pooledUrl,
  testDatabaseUrl,
  testPoolerUrl,
} from '../../helpers/database.js';

/**
 * How Butler opens Postgres: straight to the server (statement timeout at connect, prepared statements, LISTEN),
 * behind a transaction pooler with the server's URL beside it (LISTEN there), and behind the pooler alone
 * (live events through a table); a database that refuses the connection is named with its reason.
 */

let databaseUrl: string;
const opened: OpenDatabase[] = [];
const open = async (url: string, directUrl?: string) => {
  const database = await openDatabase({ url, directUrl, dataDir: '', logger: silentLogger, poolSize: 2 });
  opened.push(database);
  return database;
};

beforeAll(async () => {
  if (testDatabaseUrl) databaseUrl = await createPostgresDatabase();
});
afterAll(async () => {
  for (const database of opened) await database.close();
  if (databaseUrl) await dropPostgresDatabase(databaseUrl);
});

describe.runIf(testDatabaseUrl)('opening Postgres', () => {
  it('straight to the server: no pooler, events over LISTEN, nothing to say', async () => {
    const database = await open(databaseUrl);
    expect({ pooled: database.pooled, events: database.events }).toEqual({ pooled: false, events: 'listen' });
    expect(poolerNote(database)).toBeUndefined();
    await database.ping(1000);
  });

  it.runIf(testPoolerUrl)(
    'behind the pooler: events over LISTEN on the direct URL, or a table without it',
    async () => {
      const withDirect = await open(pooledUrl(databaseUrl), databaseUrl);
      expect({ pooled: withDirect.pooled, events: withDirect.events }).toEqual({
        pooled: true,
        events: 'listen',
      });
      const alone = await open(pooledUrl(databaseUrl));
      expect({ pooled: alone.pooled, events: alone.events }).toEqual({ pooled: true, events: 'table' });
      expect(poolerNote(alone)).toMatch(/set DATABASE_DIRECT_URL/);
      // Transactions carry their statement timeout behind the pooler.
      await alone.db.transaction(async (tx) => {
        const rows = await tx.execute(sql`show statement_timeout`);
        expect(JSON.stringify(rows)).toContain('2s');
      });
    },
  );

  it('names the variable, the host and the reason when the server refuses, within seconds', async () => {
    const refused = new URL(databaseUrl);
    refused.port = '1';
    const started = Date.now();
    await expect(open(refused.toString())).rejects.toThrow(
      /^DATABASE_URL \(127\.0\.0\.1:1\): .*ECONNREFUSED/,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
