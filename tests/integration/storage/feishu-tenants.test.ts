import * as lark from '@larksuiteoapi/node-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  sealedLarkCache,
  tenantTokenEntry,
  ticketTrustedForMs,
} from '../../../src/adapters/feishu/sealed-cache.js';
import { parseSecretKey, SecretBox } from '../../../src/core/connections/secret-box.js';
import { silentLogger } from '../../../src/core/contracts/logger.js';
import {
  feishuSecretRepository,
  feishuTenantRepository,
} from '../../../src/storage/repositories/feishu-tenants.js';
import { feishuSecrets } from '../../../src/storage/schema.js';
import { openTestDatabase, type TestDatabase } from '../../helpers/database.js';

/** A store app's credentials and Feishu tenants, on the real database (Postgres or PGlite). */

const appId = 'cli_5705e5705e5705e5';
const box = new SecretBox([
  parseSecretKey('ab'.repeat(32)) as NonNullable<ReturnType<typeof parseSecretKey>>,
]);
let database: TestDatabase;

beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(() => database?.close());

describe('a store app’s credentials, as the Lark SDK caches them', () => {
  it('keeps a tenant token sealed until the absolute time the SDK gives, in milliseconds', async () => {
    let now = Date.parse('2026-11-28T10:00:00Z');
    const repository = feishuSecretRepository(database.db);
    const cache = () =>
      sealedLarkCache({ appId, repository, secrets: box, logger: silentLogger, now: () => now });
    const entry = tenantTokenEntry('tenant_one');
    // As the SDK sets it: two hours from now, less three minutes, in epoch milliseconds.
    expect(await cache().set(entry, 't-secret-token', now + 7200_000 - 180_000, { namespace: appId })).toBe(
      true,
    );

    const [row] = await database.db.select().from(feishuSecrets);
    expect(row?.sealedValue).not.toContain('t-secret-token');
    expect(row?.expiresAt?.getTime()).toBe(now + 7200_000 - 180_000);

    now += 60 * 60_000;
    expect(await cache().get(entry, { namespace: appId })).toBe('t-secret-token');
    // Another app's entry is not this cache's to give.
    expect(await cache().get(entry, { namespace: 'cli_other' })).toBeUndefined();
    now += 60 * 60_000;
    expect(await cache().get(entry, { namespace: appId })).toBeUndefined();
  });

  it('trusts a pushed ticket for a while only, and never opens a value sealed for another entry', async () => {
    let now = Date.parse('2026-11-28T12:00:00Z');
    const repository = feishuSecretRepository(database.db);
    const cache = sealedLarkCache({ appId, repository, secrets: box, logger: silentLogger, now: () => now });
    await cache.set(lark.CAppTicket, 'ticket-1', undefined, { namespace: appId });
    expect(await cache.get(lark.CAppTicket, { namespace: appId })).toBe('ticket-1');
    now += ticketTrustedForMs + 1;
    expect(await cache.get(lark.CAppTicket, { namespace: appId })).toBeUndefined();

    // A tenant's sealed token copied under another tenant's name does not open there.
    await cache.set(tenantTokenEntry('tenant_a'), 't-of-a', now + 3600_000, { namespace: appId });
    const stolen = await repository.get(appId, tenantTokenEntry('tenant_a'));
    await repository.put(appId, tenantTokenEntry('tenant_b'), stolen?.sealed as never, stolen?.expiresAt);
    const fresh = sealedLarkCache({ appId, repository, secrets: box, logger: silentLogger, now: () => now });
    expect(await fresh.get(tenantTokenEntry('tenant_b'), { namespace: appId })).toBeUndefined();
  });
});

describe('Feishu tenants', () => {
  it('belong to the first app that claims them, until that app is uninstalled there', async () => {
    const tenants = feishuTenantRepository(database.db);
    const claims = await Promise.all([
      tenants.claim('tenant_x', 'cli_first'),
      tenants.claim('tenant_x', 'cli_second'),
    ]);
    const winner = claims[0].served ? 'cli_first' : 'cli_second';
    const loser = winner === 'cli_first' ? 'cli_second' : 'cli_first';
    expect(claims.filter((claim) => claim.served)).toHaveLength(1);
    expect(await tenants.claim('tenant_x', winner)).toEqual({ served: true, returned: false });
    expect(await tenants.claim('tenant_x', loser)).toEqual({ served: false, by: winner });

    // Only the serving app can uninstall; then the tenant is free, and its app's return is noticed.
    expect(await tenants.uninstall('tenant_x', loser)).toBe(false);
    expect(await tenants.uninstall('tenant_x', winner)).toBe(true);
    expect(await tenants.claim('tenant_x', winner)).toEqual({ served: true, returned: true });
    expect(await tenants.uninstall('tenant_x', winner)).toBe(true);
    expect(await tenants.claim('tenant_x', loser)).toEqual({ served: true, returned: true });
    expect((await tenants.get('tenant_x'))?.appId).toBe(loser);
  });
});
