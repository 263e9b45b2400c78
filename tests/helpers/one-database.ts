import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach } from 'vitest';
import { startTestButler, type TestButler, type TestButlerOptions } from './butler-app.js';

/**
 * Butlers that share one database within a test: a restart (stop one, start the next) or two processes at
 * once. Each test gets a fresh database; every Butler it started is closed after it, the first (which owns a
 * Postgres database) last. Call at the top of a test file: it registers its own `beforeEach`.
 */
export function butlersOnOneDatabase(prefix: string) {
  let dataDir = '';
  const running: TestButler[] = [];
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), prefix));
    return async () => {
      for (const app of running.splice(0).reverse()) await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    };
  });
  /** A Butler on this test's database; a stopped one stays in the list, its database the test's. */
  return async function start(
    options: Omit<TestButlerOptions, 'dataDir' | 'databaseUrl'>,
  ): Promise<TestButler> {
    const first = running[0];
    const app = await startTestButler({
      ...options,
      dataDir,
      ...(first?.databaseUrl ? { databaseUrl: first.databaseUrl } : {}),
    });
    running.push(app);
    return app;
  };
}
