import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * docs/architecture.md: `core/contracts` imports nothing from the rooms, only its own files and packages; the
 * other rooms import only rooms below them, in this order (the hall first, `inbox` on top).
 */
const floors = [
  'contracts',
  'text',
  'forms',
  'observe',
  'people',
  'stop',
  'usage',
  'model',
  'feedback',
  'tools',
  'brain',
  'files',
  'connections',
  'search',
  'schedules',
  'budgets',
  'approvals',
  'inputs',
  'tool-calls',
  'agents',
  'profiles',
  'turn',
  'inbox',
];

const core = 'src/core';

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Each import of a core file that leaves its room: the file, and the room it reaches. */
function roomImports() {
  return sourceFiles(core).flatMap((file) => {
    const room = relative(core, file).split('/')[0] ?? '';
    return [...readFileSync(file, 'utf8').matchAll(/from '(\.[^']*)'/g)].flatMap((match) => {
      const target = relative(core, join(file, '..', match[1] ?? '')).split('/')[0] ?? '';
      return target === room ? [] : [{ file, room, target }];
    });
  });
}

describe('core rooms', () => {
  it('every room has a floor', () => {
    const rooms = readdirSync(core, { withFileTypes: true }).filter((entry) => entry.isDirectory());
    expect(rooms.map((entry) => entry.name).filter((name) => !floors.includes(name))).toEqual([]);
  });

  it('core/contracts imports only its own files', () => {
    const outside = roomImports().filter((entry) => entry.room === 'contracts');
    expect(outside).toEqual([]);
  });

  it('rooms import only rooms below them', () => {
    const upward = roomImports()
      .filter((entry) => floors.indexOf(entry.target) >= floors.indexOf(entry.room))
      .map((entry) => `${entry.file} imports ${entry.target}`);
    expect(upward).toEqual([]);
  });
});
