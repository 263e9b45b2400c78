import { describe, expect, it } from 'vitest';
import { parseRetryNumber, parseSlackRequest } from '../../../src/adapters/slack/parse.js';
import { PayloadError } from '../../../src/core/contracts/errors.js';
import { asForm, blockActions } from './payloads.js';

const json = 'application/json';
const form = 'application/x-www-form-urlencoded';

describe('parseSlackRequest', () => {
  it('answers url_verification with its challenge', () => {
    const body = Buffer.from(JSON.stringify({ token: 't', challenge: 'abc123', type: 'url_verification' }));
    expect(parseSlackRequest(body, json)).toEqual({ kind: 'url_verification', challenge: 'abc123' });
  });

  it('parses Events API JSON (with a charset parameter)', () => {
    const body = Buffer.from(JSON.stringify({ type: 'event_callback', event: { type: 'app_mention' } }));
    expect(parseSlackRequest(body, 'application/json; charset=utf-8')).toMatchObject({
      kind: 'payload',
      body: { type: 'event_callback' },
    });
  });

  it('parses interactivity form posts (payload=<JSON>)', () => {
    const post = asForm(blockActions({ approvalId: 'ap-1', actionId: 'butler_approve', messageTs: '1.2' }));
    const parsed = parseSlackRequest(Buffer.from(post.body), form);
    expect(parsed).toMatchObject({
      kind: 'payload',
      body: { type: 'block_actions', actions: [{ value: 'ap-1' }] },
    });
  });

  it('recognises ssl_check', () => {
    expect(parseSlackRequest(Buffer.from('ssl_check=1&token=abc'), form)).toEqual({ kind: 'ssl_check' });
  });

  it('rejects malformed bodies with PayloadError', () => {
    expect(() => parseSlackRequest(Buffer.from('{not json'), json)).toThrow(PayloadError);
    expect(() => parseSlackRequest(Buffer.from('[1,2]'), json)).toThrow(PayloadError);
    expect(() => parseSlackRequest(Buffer.from('payload=%7Bbroken'), form)).toThrow(PayloadError);
    expect(() => parseSlackRequest(Buffer.from('x'), 'text/plain')).toThrow(PayloadError);
    expect(() => parseSlackRequest(Buffer.from(JSON.stringify({ type: 'url_verification' })), json)).toThrow(
      /challenge/,
    );
  });

  it('reads X-Slack-Retry-Num', () => {
    expect(parseRetryNumber('2')).toBe(2);
    expect(parseRetryNumber(undefined)).toBeUndefined();
    expect(parseRetryNumber('x')).toBeUndefined();
  });
});
