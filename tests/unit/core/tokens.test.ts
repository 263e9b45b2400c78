import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { countTextTokens } from '../../../src/core/text/tokens.js';

describe('countTextTokens', () => {
  it('counts short and empty texts as the encoder does', () => {
    expect(countTextTokens('')).toBe(0);
    expect(countTextTokens('Deploy 4411 is green.')).toBe(countTokens('Deploy 4411 is green.'));
  });

  it('gives each long text its own count, also once it was counted before and after many others', () => {
    const texts = Array.from({ length: 600 }, (_, index) =>
      `${'word '.repeat(60 + (index % 7))}${index} ${'🙂'.repeat(index % 5)}`.padEnd(300, '.'),
    );
    const expected = texts.map((text) => countTokens(text));
    for (let round = 0; round < 3; round++) {
      expect(texts.map((text) => countTextTokens(text))).toEqual(expected);
    }
    // Texts that differ only at the very end are told apart.
    const stem = 'x'.repeat(500);
    expect(countTextTokens(`${stem} alpha beta gamma`)).toBe(countTokens(`${stem} alpha beta gamma`));
    expect(countTextTokens(`${stem} a`)).toBe(countTokens(`${stem} a`));
  });
});
