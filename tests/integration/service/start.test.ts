import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { entryArguments, repositoryRoot, tsxEnvironment } from '../../helpers/entry-points.js';

/**
 * `npm start`'s entry point as a process, configured only by environment, in a directory of its own (a
 * developer's `butler.config.yaml` or `.env` in the repository is not the test's).
 */
function startService(env: Record<string, string>) {
  const cwd = mkdtempSync(join(tmpdir(), 'butler-cwd-'));
  const child = spawn(process.execPath, entryArguments('src/main.ts'), {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...tsxEnvironment, ...env },
    cwd,
    stdio: 'pipe',
  });
  child.on('exit', () => rmSync(cwd, { recursive: true, force: true }));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += String(chunk);
  });
  child.stderr.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

describe('the service process', () => {
  it('starts with nothing configured, serves health and readiness, and stops cleanly on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'butler-start-'));
    const service = startService({ PORT: '0', BUTLER_DATA_DIR: dataDir });
    try {
      const deadline = Date.now() + 30_000;
      let port: string | undefined;
      while (!port && Date.now() < deadline) {
        port = service.stdout().match(/Butler is up on http:\/\/localhost:(\d+)/)?.[1];
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(port, service.stderr()).toBeDefined();
      const banner = service.stdout();
      // A cold start says what it is doing before the banner, instead of seconds of silence.
      const creating = 'first start: creating the embedded database (about 10 s; later starts take a few)';
      expect(banner.indexOf(creating)).toBeGreaterThan(-1);
      expect(banner.indexOf(creating)).toBeLessThan(banner.indexOf('Butler is up'));
      expect(banner).toContain('set BUTLER_MODEL');
      expect(banner).toContain('set SLACK_BOT_TOKEN');
      expect(banner).toContain('set FEISHU_APP_ID');
      expect(banner).toContain('set LANGFUSE_ENABLED=true');

      expect(await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()).toEqual({ status: 'ok' });
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ ready: true, checks: { database: 'ok' } });
      expect((await fetch(`http://127.0.0.1:${port}/slack/events`, { method: 'POST' })).status).toBe(404);

      service.child.kill('SIGTERM');
      expect(await service.exited).toBe(0);
      expect(service.stdout()).toContain('shutting down');
    } finally {
      service.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it.each(['start', 'chat'])(
    '`npm run %s` reads a .env where it runs',
    async (script) => {
      // The script's own command (package.json), run where a user keeps their .env: a bad PORT in it must stop
      // the start with its name, which only happens if the file was read.
      const scripts = JSON.parse(readFileSync(join(repositoryRoot, 'package.json'), 'utf8'))
        .scripts as Record<string, string>;
      const [tsx, ...words] = (scripts[script] ?? '').split(' ');
      expect(tsx).toBe('tsx');
      const flags = words.filter((word) => word.startsWith('--'));
      const entry = words.find((word) => !word.startsWith('--')) ?? '';
      const cwd = mkdtempSync(join(tmpdir(), 'butler-dotenv-'));
      writeFileSync(join(cwd, '.env'), 'PORT=from-the-dot-env-file\n');
      try {
        const child = spawn(process.execPath, [...flags, ...entryArguments(entry)], {
          env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...tsxEnvironment },
          cwd,
          stdio: 'pipe',
        });
        let stderr = '';
        child.stderr.on('data', (chunk) => {
          stderr += String(chunk);
        });
        expect(await new Promise((resolve) => child.on('exit', resolve))).toBe(1);
        expect(stderr).toContain('PORT');
      } finally {
        rmSync(cwd, { recursive: true, force: true });
      }
    },
    30_000,
  );

  it('refuses to start on bad configuration, naming every bad variable', async () => {
    const service = startService({
      PORT: 'eighty',
      SLACK_BOT_TOKEN: 'xoxb-1',
      BUTLER_BASE_URL: 'http://localhost:11434/v1',
      BUTLER_DATA_DIR: join(tmpdir(), 'butler-never-created'),
    });
    expect(await service.exited).toBe(1);
    expect(service.stderr()).toContain('PORT');
    expect(service.stderr()).toContain('Invalid configuration');
  }, 30_000);

  it('names cross-field problems: a platform half configured, a model without a name', async () => {
    const service = startService({
      SLACK_BOT_TOKEN: 'xoxb-1',
      BUTLER_BASE_URL: 'http://localhost:11434/v1',
      BUTLER_DATA_DIR: join(tmpdir(), 'butler-never-created'),
    });
    expect(await service.exited).toBe(1);
    expect(service.stderr()).toContain('SLACK_SIGNING_SECRET');
    expect(service.stderr()).toContain('BUTLER_MODEL');
  }, 30_000);
});
