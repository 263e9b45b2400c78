import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpServer, type McpServerSettings } from '../../../src/core/tools/mcp/index.js';
import { outputText, type Tool } from '../../../src/core/tools/tool.js';
import { recordingLogger, testSettings, toolContext } from '../../helpers/mcp-test-server.js';

/**
 * The real reference servers, installed as devDependencies and run from node_modules (no network): what
 * Butler meets outside its own test server.
 */

const modules = fileURLToPath(new URL('../../../node_modules/@modelcontextprotocol/', import.meta.url));
const everythingEntry = join(modules, 'server-everything/dist/index.js');
const filesystemEntry = join(modules, 'server-filesystem/dist/index.js');

function published(name: string, entry: string, args: string[]): McpServerSettings {
  return testSettings(name, { kind: 'stdio', command: process.execPath, args: [entry, ...args], env: {} });
}

function toolOf(server: McpServer, name: string): Tool {
  const found = server.tools().find((candidate) => candidate.name === `${server.name}__${name}`);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

async function call(tool: Tool, raw: unknown): Promise<string> {
  const parsed = tool.parse(raw);
  if (!parsed.ok) throw new Error(parsed.error);
  return outputText(await tool.execute(parsed.value, toolContext()));
}

describe.skipIf(!existsSync(everythingEntry))('@modelcontextprotocol/server-everything over stdio', () => {
  const server = new McpServer(published('everything', everythingEntry, ['stdio']), recordingLogger().logger);
  beforeAll(() => server.start());
  afterAll(() => server.stop());

  it('lists its tools with names and risks and runs read-only ones', async () => {
    expect(server.status()).toMatchObject({ state: 'connected', transport: 'stdio' });
    const echo = toolOf(server, 'echo');
    expect(echo.risk).toBe('low');
    expect(toolOf(server, 'get-sum').risk).toBe('low');
    expect(echo.summarize({ message: 'hi there' })).toBe('everything: echo(message="hi there")');
    await expect(call(echo, { message: 'hi there' })).resolves.toBe('Echo: hi there');
    await expect(call(toolOf(server, 'get-sum'), { a: 2, b: 3 })).resolves.toMatch(/5/);
  });

  it('formats its structured, image and resource results', async () => {
    const structured = await call(toolOf(server, 'get-structured-content'), { location: 'New York' });
    expect(JSON.parse(structured)).toHaveProperty('temperature');
    await expect(call(toolOf(server, 'get-tiny-image'), {})).resolves.toMatch(
      /\[image: image\/png, \d+ KB\]/,
    );
    await expect(call(toolOf(server, 'get-resource-links'), { count: 1 })).resolves.toMatch(
      /\[resource link: /,
    );
  });
});

describe.skipIf(!existsSync(filesystemEntry))('@modelcontextprotocol/server-filesystem over stdio', () => {
  // The server resolves symlinks (macOS /tmp, some CI temp dirs), so the allowed root is the real path.
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'butler-mcp-fs-')));
  const server = new McpServer(published('fs', filesystemEntry, [root]), recordingLogger().logger);
  beforeAll(async () => {
    writeFileSync(join(root, 'note.txt'), 'hello from the filesystem server\n');
    await server.start();
  });
  afterAll(async () => {
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('maps its annotations to risks', () => {
    expect(toolOf(server, 'read_text_file').risk).toBe('low');
    expect(toolOf(server, 'list_directory').risk).toBe('low');
    expect(toolOf(server, 'create_directory').risk).toBe('medium');
    expect(toolOf(server, 'write_file').risk).toBe('high');
    expect(toolOf(server, 'move_file').risk).toBe('high');
  });

  it('reads a file without repeating it as structured content', async () => {
    const text = await call(toolOf(server, 'read_text_file'), { path: join(root, 'note.txt') });
    expect(text).toBe('hello from the filesystem server\n');
  });

  it('reports a refused path as a tool error', async () => {
    await expect(call(toolOf(server, 'read_text_file'), { path: '/etc/hostname' })).rejects.toMatchObject({
      code: 'mcp_tool_failed',
      message: /denied|outside|not allowed/i,
    });
  });
});
