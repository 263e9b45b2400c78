import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The image (Dockerfile) holds only what it COPYs, with `npm ci --omit=dev`: what Butler loads at run time
 * must be among those files and its production dependencies, or the container fails where `npm start` works.
 */

function instructions(): { name: string; text: string }[] {
  const joined = readFileSync('Dockerfile', 'utf8').replace(/\\\n/g, ' ');
  return joined
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [name = '', ...rest] = line.split(/\s+/);
      return { name: name.toUpperCase(), text: rest.join(' ') };
    });
}

/** The build-context paths the final image copies (COPY without --from), without trailing slashes. */
function copiedPaths(): string[] {
  return instructions()
    .filter(({ name, text }) => name === 'COPY' && !text.includes('--from'))
    .flatMap(({ text }) =>
      text
        .split(' ')
        .filter((word) => !word.startsWith('--'))
        .slice(0, -1),
    )
    .map((path) => path.replace(/\/$/, ''));
}

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

const packageJson = JSON.parse(readFileSync('package.json', 'utf8')) as {
  dependencies: Record<string, string>;
};

describe('the container image', () => {
  it('copies files that exist, each let through by .dockerignore', () => {
    const rules = readFileSync('.dockerignore', 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    // Everything is left out unless listed, so .env, butler.config.yaml and .butler never reach a build.
    expect(rules[0]).toBe('*');
    const allowed = new Set(
      rules.filter((rule) => rule.startsWith('!')).map((rule) => rule.slice(1).replace(/\/$/, '')),
    );
    expect(copiedPaths().length).toBeGreaterThan(0);
    for (const path of copiedPaths()) {
      expect(existsSync(path), path).toBe(true);
      expect(allowed.has(path), `${path} in .dockerignore`).toBe(true);
    }
  });

  it('starts a file it copies, through a loader that is a production dependency', () => {
    const command = instructions().findLast(({ name }) => name === 'CMD');
    const words = JSON.parse(command?.text ?? '[]') as string[];
    const loader = words[words.indexOf('--import') + 1] ?? '';
    expect(Object.keys(packageJson.dependencies)).toContain(loader);
    const entry = words.at(-1) ?? '';
    expect(existsSync(entry), entry).toBe(true);
    expect(copiedPaths().some((path) => entry.startsWith(`${path}/`))).toBe(true);
  });

  it('holds every package src/ imports: none is only a devDependency', () => {
    const specifier = /(?:from\s+|import\s*\(\s*|import\s+)'([^'.][^']*)'/g;
    const imported = new Set(
      sourceFiles('src').flatMap((file) =>
        [...readFileSync(file, 'utf8').matchAll(specifier)]
          .map((match) => match[1] ?? '')
          .filter((name) => !name.startsWith('node:'))
          .map((name) =>
            name
              .split('/')
              .slice(0, name.startsWith('@') ? 2 : 1)
              .join('/'),
          ),
      ),
    );
    expect(imported.size).toBeGreaterThan(0);
    const missing = [...imported].filter((name) => !(name in packageJson.dependencies));
    expect(missing).toEqual([]);
  });

  it('holds the folders src/ reads next to its code at run time (migrations, console files)', () => {
    const reference = /new URL\('([^']+)',\s*import\.meta\.url\)/g;
    const folders = sourceFiles('src').flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(reference)].map((match) =>
        relative('.', resolve(dirname(file), match[1] ?? '')),
      ),
    );
    expect(folders).toContain('drizzle');
    for (const folder of folders) {
      expect(
        copiedPaths().some((path) => folder === path || folder.startsWith(`${path}/`)),
        `${folder} is copied into the image`,
      ).toBe(true);
    }
  });
});
