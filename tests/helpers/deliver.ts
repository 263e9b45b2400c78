/**
 * A platform's delivery to Butler over fetch. A kept-alive socket that Butler's server closed just as the
 * request went out on it answers with a reset (the keep-alive race, likelier on a loaded machine); the request
 * never reached a handler, and the platform would deliver again, so this does too, once.
 */
export async function deliver(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    const cause = error instanceof TypeError ? (error.cause as { code?: string } | undefined) : undefined;
    if (cause?.code !== 'ECONNRESET') throw error;
    return fetch(url, init);
  }
}
