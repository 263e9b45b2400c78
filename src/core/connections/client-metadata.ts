import { callbackPath } from './connection-book.js';

/**
 * Butler's OAuth Client ID Metadata Document (draft-ietf-oauth-client-id-metadata-document; the MCP
 * authorization spec prefers it to dynamic registration): an authorization server that says
 * `client_id_metadata_document_supported` takes the document's https URL as Butler's client id and reads this
 * document from it, so Butler need not register with each server. Served under BUTLER_PUBLIC_URL.
 */
export const clientMetadataPath = '/oauth/client-metadata.json';

/** Where Butler's document is, when its public URL is https (the spec allows no other). */
export function clientMetadataUrlOf(publicUrl: string): string | undefined {
  return publicUrl.startsWith('https://') ? `${publicUrl}${clientMetadataPath}` : undefined;
}

/** The document: a public client (PKCE, no secret) whose only redirect URI is Butler's callback. */
export function clientMetadataDocument(publicUrl: string) {
  return {
    client_id: `${publicUrl}${clientMetadataPath}`,
    client_name: 'Butler',
    client_uri: publicUrl,
    redirect_uris: [`${publicUrl}${callbackPath}`],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}
