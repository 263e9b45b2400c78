import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/** docs/architecture.md: `core/contracts` imports nothing from the rooms, only its own files and packages. */

const directory = 'src/core/contracts';

describe('core/contracts', () => {
  it('imports only its own files', () => {
    const outside = readdirSync(directory)
      .filter((name) => name.endsWith('.ts'))
      .flatMap((name) =>
        [...readFileSync(join(directory, name), 'utf8').matchAll(/from '(\.[^']*)'/g)]
          .map((match) => match[1] ?? '')
          .filter((path) => !path.startsWith('./'))
          .map((path) => `${name} imports ${path}`),
      );
    expect(outside).toEqual([]);
  });
});
