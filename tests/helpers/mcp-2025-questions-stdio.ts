import { appendFileSync } from 'node:fs';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { type Call2025, createQuestioning2025Server } from './mcp-2025-questions.js';

/**
 * The questioning 2025-11-25 server as a child process over stdio. Each call is appended as one JSON line to the
 * file named by MCP_TEST_CALL_LOG (if set).
 */
const callLog = process.env.MCP_TEST_CALL_LOG;
const server = createQuestioning2025Server((call: Call2025) => {
  if (callLog) appendFileSync(callLog, `${JSON.stringify(call)}\n`);
});
process.stderr.write(`mcp 2025 questions server starting (pid ${process.pid})\n`);
await server.connect(new StdioServerTransport());
