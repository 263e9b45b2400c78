import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../../src/core/tools/mcp/index.js';

describe('createRedactor', () => {
  const redact = createRedactor({
    configuredValues: ['ghp-configured-value-123', 'Bearer header-token-456', 'warn'],
    secrets: ['app-secret', 'x'.repeat(3)],
  });

  it('removes configured values and explicit secrets', () => {
    expect(redact('key ghp-configured-value-123 used')).toBe('key [redacted] used');
    expect(redact('secret app-secret!')).toBe('secret [redacted]!');
    expect(redact('raw header-token-456')).toBe('raw [redacted]');
    expect(redact('xxx')).toBe('[redacted]');
  });

  it('keeps short configured values such as log levels', () => {
    expect(redact('[warn] starting')).toBe('[warn] starting');
  });

  it('removes token shapes whoever they belong to', () => {
    expect(redact('Authorization: Bearer abc.def-ghi')).toBe('Authorization: Bearer [redacted]');
    expect(redact('using sk-proj-abcdefghijkl')).toBe('using [redacted]');
    expect(redact('slack xoxb-1234-5678-abcdef')).toBe('slack [redacted]');
    expect(redact('app xapp-1-A0-123456789')).toBe('app [redacted]');
    expect(redact('gh ghp_abcdefghijklmnopqrstuvwxyz')).toBe('gh [redacted]');
    expect(redact('url ?access_token=abc123&x=1')).toBe('url ?access_token=[redacted]&x=1');
    expect(redact('{"api_key": "k-1"}')).toBe('{"api_key": "[redacted]"}');
    expect(redact('max_tokens=100 tokens: 5')).toBe('max_tokens=100 tokens: 5');
  });
});
