import {
  type CallToolResult,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
  McpServer,
} from '@modelcontextprotocol/server';
import * as z from 'zod/v4';

/** One `tools/call` a 2026 test server received: the arguments, and what came back of a round before. */
export interface Call2026 {
  tool: string;
  args: Record<string, unknown>;
  inputResponses?: Record<string, unknown>;
  requestState?: string;
}

/**
 * An MCP server written with the v2 server SDK (`@modelcontextprotocol/server`), which speaks the stateless
 * 2026-07-28 revision to a client that negotiates it and 2025-11-25 to one that does not. `ship` asks where to
 * ship (a form) and carries the item in `requestState`; `sign_in` asks for a password (which no client should
 * show); `verify` asks the person to open a page. Each call is told to `record`.
 */
export function create2026McpServer(record: (call: Call2026) => void = () => {}): McpServer {
  const server = new McpServer({ name: 'butler-test-2026', version: '1.0.0' });
  server.registerTool(
    'echo',
    {
      description: 'Say the text back',
      inputSchema: z.object({ text: z.string() }),
      annotations: { readOnlyHint: true },
    },
    async ({ text }) => ({ content: [{ type: 'text', text: `echo: ${text}` }] }),
  );
  server.registerTool(
    'pid',
    { description: 'The server process id', annotations: { readOnlyHint: true } },
    async () => ({ content: [{ type: 'text', text: String(process.pid) }] }),
  );
  server.registerTool(
    'ship',
    {
      description: 'Ship an item; asks the person where to',
      inputSchema: z.object({ item: z.string() }),
      annotations: { readOnlyHint: false, destructiveHint: false },
    },
    async ({ item }, context): Promise<CallToolResult | InputRequiredResult> => {
      const { inputResponses } = context.mcpReq;
      const requestState = context.mcpReq.requestState<string>();
      record({
        tool: 'ship',
        args: { item },
        ...(inputResponses ? { inputResponses } : {}),
        ...(typeof requestState === 'string' ? { requestState } : {}),
      });
      const answer = inputResponse(inputResponses, 'shipping');
      if (answer.kind !== 'elicit')
        return inputRequired({
          inputRequests: {
            shipping: inputRequired.elicit({
              message: `Where should the ${item} go?`,
              requestedSchema: {
                type: 'object',
                properties: {
                  address: { type: 'string', title: 'Address', description: 'Where it goes', minLength: 3 },
                  speed: {
                    type: 'string',
                    title: 'Speed',
                    oneOf: [
                      { const: 'standard', title: 'Standard' },
                      { const: 'express', title: 'Express' },
                    ],
                    default: 'standard',
                  },
                  copies: { type: 'integer', title: 'Copies', minimum: 1, maximum: 5, default: 1 },
                  gift: { type: 'boolean', title: 'Gift wrap', default: false },
                },
                required: ['address', 'speed'],
              },
            }),
          },
          requestState: `ship:${item}`,
        });
      if (answer.action !== 'accept')
        return { content: [{ type: 'text', text: `Not shipped: the person chose ${answer.action}.` }] };
      return { content: [{ type: 'text', text: `Shipped ${item}: ${JSON.stringify(answer.content)}` }] };
    },
  );
  server.registerTool(
    'sign_in',
    { description: 'Signs in; asks for a password', annotations: { readOnlyHint: true } },
    async (context): Promise<CallToolResult | InputRequiredResult> => {
      const { inputResponses } = context.mcpReq;
      record({ tool: 'sign_in', args: {}, ...(inputResponses ? { inputResponses } : {}) });
      const answer = inputResponse(inputResponses, 'login');
      if (answer.kind !== 'elicit')
        return inputRequired({
          inputRequests: {
            login: inputRequired.elicit({
              message: 'Your password, please',
              requestedSchema: {
                type: 'object',
                properties: { password: { type: 'string' } },
                required: ['password'],
              },
            }),
          },
        });
      return { content: [{ type: 'text', text: `Sign-in answered: ${answer.action}` }] };
    },
  );
  server.registerTool(
    'verify',
    { description: 'Asks the person to verify on a web page', annotations: { readOnlyHint: true } },
    async (context): Promise<CallToolResult | InputRequiredResult> => {
      const { inputResponses } = context.mcpReq;
      record({ tool: 'verify', args: {}, ...(inputResponses ? { inputResponses } : {}) });
      const answer = inputResponse(inputResponses, 'page');
      if (answer.kind !== 'elicit')
        return inputRequired({
          inputRequests: {
            page: inputRequired.elicitUrl({
              message: 'Verify your account',
              url: 'https://verify.example.com/start?session=abc',
            }),
          },
        });
      return { content: [{ type: 'text', text: `Verification: ${answer.action}` }] };
    },
  );
  return server;
}
