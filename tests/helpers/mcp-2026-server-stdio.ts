import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { create2026McpServer } from './mcp-2026-tools.js';

/** The v2 SDK's test server as a child process over stdio: one server per connection, either era. */
serveStdio(() => create2026McpServer());
