import type { InputRequest } from '../../contracts/input-needed.js';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The requests of an `input_required` result (MCP 2026-07-28) as Butler asks them: elicitations only, since
 * Butler declares no sampling or roots. Anything else, or a malformed one, is reported, not guessed at.
 */
export function toInputRequests(
  inputRequests: unknown,
): { requests: InputRequest[] } | { unsupported: string } {
  if (!isRecord(inputRequests) || Object.keys(inputRequests).length === 0)
    return { unsupported: 'it asked for input without saying what' };
  const requests: InputRequest[] = [];
  for (const [key, request] of Object.entries(inputRequests)) {
    if (!isRecord(request) || request.method !== 'elicitation/create' || !isRecord(request.params))
      return {
        unsupported: `it asked for ${String(isRecord(request) ? request.method : 'something')}, which Butler does not offer`,
      };
    const { params } = request;
    const message = typeof params.message === 'string' ? params.message : '';
    if (params.mode === 'url') {
      if (typeof params.url !== 'string')
        return { unsupported: 'it asked to open a page without an address' };
      requests.push({
        key,
        mode: 'url',
        message,
        url: params.url,
        ...(typeof params.elicitationId === 'string' ? { elicitationId: params.elicitationId } : {}),
      });
    } else requests.push({ key, mode: 'form', message, requestedSchema: params.requestedSchema });
  }
  return { requests };
}
