export { AccountMcpServer } from './account-mcp-server.js';
export { clientMetadataDocument, clientMetadataPath, clientMetadataUrlOf } from './client-metadata.js';
export {
  type Connected,
  ConnectionBook,
  type ConnectionBookOptions,
  callbackPath,
  connectPath,
  type OAuthServer,
  type Readiness,
} from './connection-book.js';
export { createConnectionTools } from './connection-tools.js';
export { OAuthRequestError } from './oauth-fetch.js';
export { newSecretKeyText, parseSecretKey, SecretBox, type SecretKey } from './secret-box.js';
