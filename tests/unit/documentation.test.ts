import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { z } from 'zod';
import { envSchema } from '../../src/config/env.js';
import { fileConfigSchema } from '../../src/config/file.js';
import { loadConfig } from '../../src/config/index.js';

/** Uncomments the line starting with `prefix` and the more indented commented lines under it, as a user would. */
function uncomment(text: string, prefix: string): string {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.startsWith(prefix));
  if (start === -1) throw new Error(`no line starts with ${JSON.stringify(prefix)}`);
  const indent = prefix.indexOf('#');
  const nested = new RegExp(`^ {${indent}}# {2}`);
  let end = start + 1;
  while (end < lines.length && nested.test(lines[end] ?? '')) end++;
  const opened = lines.slice(start, end).map((line) => line.slice(0, indent) + line.slice(indent + 2));
  return [...lines.slice(0, start), ...opened, ...lines.slice(end)].join('\n');
}

/** README.md and every page under docs/, as paths from the repository root. */
const pages = [
  'README.md',
  ...readdirSync('docs')
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The text outside fenced code blocks: a link or a heading inside one is an example, not a link. */
function prose(text: string): string {
  return text.replace(/^```[^\n]*\n[\s\S]*?^```/gm, '');
}

/** GitHub's anchor for each heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const [, heading = ''] of prose(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** Every key path of a config schema (`worker.leaseSeconds`, `tools.http.url`): arrays add no segment. */
function keyPaths(schema: z.ZodType, prefix = ''): string[] {
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> & { type: string } } })._zod.def;
  if (def.type === 'default' || def.type === 'optional') return keyPaths(def.innerType as z.ZodType, prefix);
  if (def.type === 'array') return keyPaths(def.element as z.ZodType, prefix);
  if (def.type !== 'object') return [];
  return Object.entries(def.shape as Record<string, z.ZodType>).flatMap(([key, child]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    return [path, ...keyPaths(child, path)];
  });
}

describe('documentation stays in step with the code', () => {
  it('README is a front page: under 300 lines, linking every page in docs/', () => {
    const readme = readFileSync('README.md', 'utf8');
    expect(readme.split('\n').length).toBeLessThan(300);
    for (const page of pages.filter((path) => path.startsWith('docs/')))
      expect(readme, `README links ${page}`).toContain(`](${page})`);
  });

  it('every relative link in README and docs/ leads to a file, and every #anchor to a heading there', () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(page, 'utf8');
      for (const [, target = ''] of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const [path = '', anchor] = target.split('#');
        const file = path === '' ? page : normalize(join(dirname(page), path));
        if (!existsSync(file)) {
          broken.push(`${page}: ${target} (no such file)`);
          continue;
        }
        if (
          anchor !== undefined &&
          !(file.endsWith('.md') && anchors(readFileSync(file, 'utf8')).has(anchor))
        )
          broken.push(`${page}: ${target} (no such heading)`);
        if (statSync(file).isDirectory() && anchor !== undefined)
          broken.push(`${page}: ${target} (a directory)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('every npm script the documentation names exists', () => {
    const scripts = Object.keys(
      (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts,
    );
    for (const page of pages)
      for (const [, name = ''] of readFileSync(page, 'utf8').matchAll(/npm run ([a-z:-]+)/g))
        expect(scripts, `${page}: npm run ${name}`).toContain(name);
  });

  it('the configuration reference names every environment variable and every config file key', () => {
    const reference = readFileSync('docs/configuration.md', 'utf8');
    const codeSpans = [...reference.matchAll(/`([^`\n]+)`/g)].map(([, span = '']) => span);
    for (const name of Object.keys(envSchema.shape))
      expect(
        codeSpans.some((span) => span.includes(name)),
        name,
      ).toBe(true);
    for (const path of keyPaths(fileConfigSchema)) {
      // Named by its last segment, in a span such as `http.method`, `agents[].maxSteps` or `.feishu`.
      const key = path.split('.').at(-1) ?? path;
      const named = new RegExp(`(^|[.\\]\\s])${key}($|[.\\[\\s])`);
      expect(
        codeSpans.some((span) => named.test(span)),
        path,
      ).toBe(true);
    }
    // The architecture page's interface contract lists them too.
    const architecture = readFileSync('docs/architecture.md', 'utf8');
    for (const name of Object.keys(envSchema.shape))
      expect(architecture, `architecture.md names ${name}`).toContain(`\`${name}\``);
  });

  it('.env.example documents every environment variable, each with a comment', () => {
    const lines = readFileSync('.env.example', 'utf8').split('\n');
    const documented = lines.flatMap((line) => line.match(/^#?\s?([A-Z][A-Z0-9_]+)=/)?.slice(1) ?? []);
    expect(new Set(documented)).toEqual(new Set(Object.keys(envSchema.shape)));
    for (const name of documented) {
      const index = lines.findIndex((line) => new RegExp(`^#?\\s?${name}=`).test(line));
      expect(
        lines.slice(Math.max(0, index - 3), index).some((line) => line.startsWith('# ')),
        name,
      ).toBe(true);
    }
  });

  it('the example config file loads', () => {
    const { config } = loadConfig({ BUTLER_CONFIG: 'butler.config.example.yaml', OPS_TOKEN: 'token' });
    expect(config.file.tools.map((tool) => tool.name)).toEqual(['restart_service']);
    expect(config.file.tools[0]?.http.headers.Authorization).toBe('Bearer token');
  });

  it("the example config's commented API section loads once uncommented, with its approver", () => {
    const example = readFileSync('butler.config.example.yaml', 'utf8');
    const opened = uncomment(uncomment(example, '# api:'), '  # api:');
    const folder = mkdtempSync(join(tmpdir(), 'butler-example-'));
    onTestFinished(() => rmSync(folder, { recursive: true, force: true }));
    const path = join(folder, 'butler.config.yaml');
    writeFileSync(path, opened);
    const { config } = loadConfig({
      BUTLER_CONFIG: path,
      OPS_TOKEN: 'token',
      BUTLER_API_KEY_CI: 'ci-key-0123456789abcdef',
      BUTLER_API_KEY_ONCALL: 'oncall-key-0123456789abcdef',
    });
    expect(config.apiKeys).toEqual([
      { name: 'ci-bot', key: 'ci-key-0123456789abcdef', scopes: ['chat'] },
      { name: 'oncall', key: 'oncall-key-0123456789abcdef', scopes: ['chat', 'approve', 'read'] },
    ]);
    expect(config.file.approvers.api).toEqual(['oncall']);
  });
});
