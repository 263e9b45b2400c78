import { describe, expect, it } from 'vitest';
import {
  cleanJson,
  cleanText,
  displayName,
  graphemePrefix,
  markdownToPlainText,
  StreamingTextCleaner,
  truncateText,
  visibleControls,
} from '../../../src/core/text/index.js';

const grinning = '\u{1F600}';
const highHalf = grinning.charAt(0);
const lowHalf = grinning.charAt(1);

describe('cleanText', () => {
  it('removes NUL and the other C0 controls but keeps tab and newline', () => {
    expect(cleanText('a\u0000b\u0001c\u0007d\u001be\u001ff')).toBe('abcdef');
    expect(cleanText('line one\r\nline\ttwo\n')).toBe('line one\nline\ttwo\n');
  });

  it('replaces unpaired surrogates with U+FFFD and keeps pairs', () => {
    expect(cleanText(`half ${highHalf} emoji`)).toBe('half \ufffd emoji');
    expect(cleanText(`${lowHalf}${highHalf}`)).toBe('\ufffd\ufffd');
    expect(cleanText(`whole ${grinning} emoji${highHalf}`)).toBe(`whole ${grinning} emoji\ufffd`);
  });

  it('leaves clean text, RTL and zero-width characters alone (the same string)', () => {
    const text = 'שלום עולם \u200f\u202eabc\u202c zero\u200bwidth \u2066isolate\u2069 نص';
    expect(cleanText(text)).toBe(text);
  });

  it('produces text Postgres accepts in jsonb', () => {
    const cleaned = cleanText(`\u0000${highHalf}x${lowHalf}`);
    expect(JSON.stringify(cleaned)).not.toMatch(/\\u0000|\\ud[89a-f]/i);
  });
});

describe('cleanJson', () => {
  it('cleans every string, keys included, at any depth', () => {
    const value = { 'k\u0000ey': ['a\u0000', { deep: `x${highHalf}` }], number: 1, flag: true, none: null };
    expect(cleanJson(value)).toEqual({ key: ['a', { deep: 'x\ufffd' }], number: 1, flag: true, none: null });
  });

  it('returns the very same object when nothing needs cleaning', () => {
    const value = { text: 'fine', list: ['a', { b: 'c' }] };
    expect(cleanJson(value)).toBe(value);
  });

  it('keeps dates and other non-plain objects as they are', () => {
    const at = new Date(0);
    expect(cleanJson({ at }).at).toBe(at);
  });
});

describe('StreamingTextCleaner', () => {
  it('keeps an emoji whole when a delta boundary cuts it in half', () => {
    const cleaner = new StreamingTextCleaner();
    const pieces = [`Hi ${highHalf}`, `${lowHalf} there`, '\u0000!'];
    const streamed = pieces.map((piece) => cleaner.push(piece)).join('') + cleaner.flush();
    expect(streamed).toBe(`Hi ${grinning} there!`);
    expect(streamed).toBe(cleanText(pieces.join('')));
  });

  it('matches cleaning the whole text at once, however it is cut', () => {
    const text = `a${grinning}\u0000b${highHalf}\u0001${lowHalf}c${highHalf}d${lowHalf}\r\n${highHalf}`;
    for (let size = 1; size <= 4; size++) {
      const cleaner = new StreamingTextCleaner();
      let streamed = '';
      for (let index = 0; index < text.length; index += size)
        streamed += cleaner.push(text.slice(index, index + size));
      streamed += cleaner.flush();
      expect(streamed, `pieces of ${size}`).toBe(cleanText(text));
    }
  });

  it('turns a high surrogate left at the end into U+FFFD', () => {
    const cleaner = new StreamingTextCleaner();
    expect(cleaner.push(`end${highHalf}`)).toBe('end');
    expect(cleaner.flush()).toBe('\ufffd');
  });
});

describe('truncateText and graphemePrefix', () => {
  // Each of these is one grapheme of several UTF-16 units: cutting inside one shows half an emoji.
  const family = '\u{1F468}\u200d\u{1F469}\u200d\u{1F467}';
  const flag = '\u{1F1E9}\u{1F1EA}';
  const accented = 'e\u0301';
  const graphemes = (text: string) => [...new Intl.Segmenter().segment(text)].map((part) => part.segment);

  it('never cuts a grapheme in half, whatever the limit', () => {
    for (const grapheme of [family, flag, accented, grinning]) {
      const text = `ok ${grapheme.repeat(5)}`;
      const whole = graphemes(text);
      for (let limit = 0; limit <= text.length; limit++) {
        const prefix = graphemePrefix(text, limit);
        expect(prefix.length).toBeLessThanOrEqual(limit);
        expect(prefix).toBe(whole.slice(0, graphemes(prefix).length).join(''));
        // The longest such prefix: one more grapheme would not fit.
        expect(prefix.length + (whole[graphemes(prefix).length]?.length ?? Infinity)).toBeGreaterThan(limit);
      }
    }
  });

  it('keeps text within the limit and marks a cut with an ellipsis', () => {
    expect(truncateText('short', 10)).toBe('short');
    expect(truncateText('abcdef', 4)).toBe('abc…');
    expect(truncateText(grinning.repeat(3), 4)).toBe(`${grinning}…`);
    expect(truncateText(flag.repeat(2), 4)).toBe('…');
  });
});

describe('visibleControls', () => {
  it('shows bidi overrides and zero-width characters instead of applying them', () => {
    expect(visibleControls('rm -rf \u202e/ tmp\u200b')).toBe('rm -rf <U+202E>/ tmp<U+200B>');
    expect(visibleControls(`plain text, \u00e9moji ${grinning}`)).toBe(`plain text, \u00e9moji ${grinning}`);
  });
});

describe('markdownToPlainText', () => {
  it('shows what chat lists and notifications show: no markers, fences, link targets or pipes', () => {
    expect(
      markdownToPlainText(
        '## Deploy **done** in `prod`\n- api: _ok_\n- [logs](https://x/y)\n```js\nconst a = 1;\n```\n| a | b |\n|---|---|\n| 1 | 2 |',
      ),
    ).toBe('Deploy done in prod api: ok logs const a = 1; a · b 1 · 2');
    // Underscores inside words and stars between numbers are not emphasis.
    expect(markdownToPlainText('my_file_name.txt and 2*3*4')).toBe('my_file_name.txt and 2*3*4');
    expect(markdownToPlainText('records__delete_record and __init__ and **x**')).toBe(
      'records__delete_record and init and x',
    );
  });
});

describe('displayName', () => {
  it('keeps a file name to what it shows: no bidi overrides, zero-width or control characters, one line', () => {
    expect(displayName('invoice-\u202efdp.exe')).toBe('invoice-fdp.exe');
    expect(displayName('re\u200bport\u2066.pdf\u2069')).toBe('report.pdf');
    expect(displayName('two\nlines\r\tand\u0085more.txt')).toBe('two lines and more.txt');
    expect(displayName('\u202e\u200f ')).toBe('file');
    expect(displayName('ü'.repeat(300))).toHaveLength(200);
  });
});
