import { readdirSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

/**
 * The tools of the MCP test server, written with the official SDK's server API. The same server runs over
 * stdio as a child process (`mcp-test-server-stdio.ts`) and over Streamable HTTP in the test process
 * (`mcp-test-server.ts`).
 */

export interface CallRecord {
  tool: string;
  /** `called` when a call starts; `cancelled` when the client cancelled it (timeout or abort). */
  event: 'called' | 'cancelled';
  arguments: Record<string, unknown>;
}

export interface TestToolOptions {
  record(call: CallRecord): void;
  /** Adds a tool named `name` to this server and every other session (HTTP), which sends `list_changed`. */
  addTool(name: string): void;
  /** stdio only: a `crash` tool that kills the process mid-call. */
  allowCrash?: boolean;
}

/** 12 KB of zeros: the size the formatter must report. */
export const testImageBytes = 12 * 1024;

function text(value: string) {
  return { content: [{ type: 'text' as const, text: value }] };
}

/** A tool added at run time: read-only, answers with its own name. */
export function registerDynamicTool(server: McpServer, name: string, options: TestToolOptions): void {
  server.registerTool(
    name,
    { description: `Added at run time: ${name}.`, annotations: { readOnlyHint: true } },
    async () => {
      options.record({ tool: name, event: 'called', arguments: {} });
      return text(`dynamic ${name}`);
    },
  );
}

export function createTestMcpServer(
  options: TestToolOptions,
  dynamicTools: Iterable<string> = [],
): McpServer {
  const server = new McpServer({ name: 'butler-test-server', version: '1.0.0' });
  const called = (tool: string, args: Record<string, unknown>) =>
    options.record({ tool, event: 'called', arguments: args });

  server.registerTool(
    'lookup',
    {
      description: 'Looks a record up.',
      inputSchema: { query: z.string() },
      annotations: { readOnlyHint: true },
    },
    async (args) => {
      called('lookup', args);
      return text(`found ${args.query}`);
    },
  );
  server.registerTool(
    'update_record',
    {
      title: 'Update a record',
      inputSchema: { id: z.string(), value: z.string() },
      annotations: { destructiveHint: false },
    },
    async (args) => {
      called('update_record', args);
      return text(`updated ${args.id}`);
    },
  );
  server.registerTool('plain', { description: 'No annotations at all.' }, async () => {
    called('plain', {});
    return text('plain done');
  });
  server.registerTool(
    'delete_record',
    {
      description: 'Deletes a record.',
      inputSchema: { id: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: true },
    },
    async (args) => {
      called('delete_record', args);
      return text(`deleted ${args.id}`);
    },
  );
  server.registerTool(
    'create_issue',
    {
      description: 'Creates an issue.',
      inputSchema: { repo: z.string(), title: z.string(), labels: z.array(z.string()).optional() },
    },
    async (args) => {
      called('create_issue', args);
      return text(JSON.stringify(args));
    },
  );
  server.registerTool(
    'slow',
    {
      description: 'Sleeps, honouring cancellation.',
      inputSchema: { ms: z.number() },
      annotations: { readOnlyHint: true },
    },
    async (args, extra) => {
      called('slow', args);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, args.ms);
        extra.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          options.record({ tool: 'slow', event: 'cancelled', arguments: args });
          reject(new Error('cancelled'));
        });
      });
      return text(`slept ${args.ms} ms`);
    },
  );
  server.registerTool('fail', { description: 'Reports a tool error.' }, async () => {
    called('fail', {});
    return { ...text('the record is locked'), isError: true };
  });
  server.registerTool('throw', { description: 'Throws inside the handler.' }, async () => {
    called('throw', {});
    throw new Error('kaboom');
  });
  server.registerTool(
    'structured',
    {
      description: 'Structured weather, repeated as JSON text as the spec asks.',
      inputSchema: { city: z.string() },
      outputSchema: { city: z.string(), temperature: z.number() },
      annotations: { readOnlyHint: true },
    },
    async (args) => {
      called('structured', args);
      const structuredContent = { city: args.city, temperature: 21.5 };
      return { ...text(JSON.stringify(structuredContent)), structuredContent };
    },
  );
  server.registerTool('structured_summary', { description: 'Structured content beside prose.' }, async () => {
    called('structured_summary', {});
    return { ...text('three items'), structuredContent: { count: 3 } };
  });
  server.registerTool('image', { description: 'Returns a PNG.' }, async () => {
    called('image', {});
    const data = Buffer.alloc(testImageBytes).toString('base64');
    return { content: [{ type: 'image' as const, data, mimeType: 'image/png' }] };
  });
  server.registerTool(
    'big_output',
    { description: 'Returns many characters.', inputSchema: { chars: z.number() } },
    async (args) => {
      called('big_output', args);
      return text('x'.repeat(args.chars));
    },
  );
  server.registerTool(
    'record',
    { description: 'Records its call.', inputSchema: { label: z.string() } },
    async (args) => {
      called('record', args);
      return text(`recorded ${args.label}`);
    },
  );
  server.registerTool(
    'add_tool',
    { description: 'Adds a tool and announces it.', inputSchema: { name: z.string() } },
    async (args) => {
      called('add_tool', args);
      options.addTool(args.name);
      return text(`added ${args.name}`);
    },
  );
  server.registerTool(
    'read_env',
    { description: 'Reads an environment variable.', inputSchema: { name: z.string() } },
    async (args) => {
      called('read_env', args);
      return text(process.env[args.name] ?? '(unset)');
    },
  );
  server.registerTool('env_keys', { description: 'Lists the environment variable names.' }, async () => {
    called('env_keys', {});
    return text(JSON.stringify(Object.keys(process.env).sort()));
  });
  server.registerTool('pid', { description: 'The server process id.' }, async () => {
    called('pid', {});
    return text(String(process.pid));
  });
  server.registerTool(
    'working_directory',
    { description: 'Where the server runs, and what is there.' },
    async () => {
      called('working_directory', {});
      return text(JSON.stringify({ path: process.cwd(), entries: readdirSync('.') }));
    },
  );
  server.registerTool(
    'log_stderr',
    { description: 'Writes a line to stderr.', inputSchema: { line: z.string() } },
    async (args) => {
      called('log_stderr', args);
      process.stderr.write(`${args.line}\n`);
      return text('logged');
    },
  );
  if (options.allowCrash) {
    server.registerTool('crash', { description: 'Exits the process mid-call.' }, async () => {
      called('crash', {});
      process.exit(3);
    });
  }
  for (const name of dynamicTools) registerDynamicTool(server, name, options);
  return server;
}
