export { AccountMcpServer, ConnectionNeededError } from './account-mcp-server.js';
export {
  type Connected,
  ConnectionBook,
  type ConnectionBookOptions,
  type ConnectionOwner,
  callbackPath,
  connectPath,
  type OAuthServer,
  type Readiness,
} from './connection-book.js';
export { createConnectionTools } from './connection-tools.js';
export { newSecretKeyText, parseSecretKey, SecretBox, type SecretKey } from './secret-box.js';
