import { appendFileSync } from 'node:fs';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  type CallRecord,
  createTestMcpServer,
  registerDynamicTool,
  type TestToolOptions,
} from './mcp-test-tools.js';

/**
 * The MCP test server as a child process over stdio. Each call is appended as one JSON line to the file
 * named by MCP_TEST_CALL_LOG (if set), so a test can count runs across restarts of the child.
 */
const callLog = process.env.MCP_TEST_CALL_LOG;
const options: TestToolOptions = {
  record: (call: CallRecord) => {
    if (callLog) appendFileSync(callLog, `${JSON.stringify(call)}\n`);
  },
  addTool: (name) => registerDynamicTool(server, name, options),
  allowCrash: true,
};
const server = createTestMcpServer(options);
process.stderr.write(`mcp test server starting (pid ${process.pid})\n`);
await server.connect(new StdioServerTransport());
