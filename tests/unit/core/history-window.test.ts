import { describe, expect, it } from 'vitest';
import { groupMessages, splitForCompaction, trimToFit } from '../../../src/core/brain/history-window.js';
import type { ConversationMessage } from '../../../src/core/contracts/messages.js';

type Sized = ConversationMessage & { tokens: number };
const user = (content: string, tokens = 10): Sized => ({ role: 'user', content, tokens });
const answer = (content: string, tokens = 10): Sized => ({ role: 'assistant', content, tokens });
const call = (id: string, tokens = 10): Sized => ({
  role: 'assistant',
  content: '',
  toolCalls: [{ id, name: 'recall', arguments: '{}' }],
  tokens,
});
const result = (id: string, tokens = 10): Sized => ({ role: 'tool', content: 'r', toolCallId: id, tokens });

describe('history window', () => {
  const history = [user('a'), call('1'), result('1'), result('1b'), answer('b'), user('c'), answer('d')];

  it('groups a tool call with all of its results', () => {
    expect(groupMessages(history).map((group) => group.length)).toEqual([1, 3, 1, 1, 1]);
  });

  it('never splits inside a tool group when choosing what to fold', () => {
    // Keeping 45 tokens would cut the call group (30 tokens) in half; the whole group is folded instead.
    const { fold, keep } = splitForCompaction(history, 45);
    expect(fold).toEqual(history.slice(0, 4));
    expect(keep).toEqual(history.slice(4));
    expect(keep[0]?.role).not.toBe('tool');
  });

  it('always keeps the newest group, even when it alone exceeds the budget', () => {
    const { fold, keep } = splitForCompaction([user('old'), answer('huge', 500)], 10);
    expect(fold).toEqual([user('old')]);
    expect(keep).toEqual([answer('huge', 500)]);
  });

  it('trims the oldest whole groups until the rest fits', () => {
    expect(trimToFit(history, 30)).toEqual(history.slice(4));
    expect(trimToFit(history, 55)).toEqual(history.slice(4));
    expect(trimToFit(history, 60)).toEqual(history.slice(1));
    expect(trimToFit(history, 0)).toEqual([]);
  });
});
