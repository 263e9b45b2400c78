import { PassThrough } from 'node:stream';

/** pino's JSON lines, as a running Butler writes them, for tests that check what is (not) logged. */
export interface LogLine {
  level: number;
  msg?: string;
  [field: string]: unknown;
}

export const warnLevel = 40;

/** A log destination for a test Butler, and everything written to it. */
export function captureLogs() {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk) => {
    text += String(chunk);
  });
  const lines = () => text.split('\n').filter((line) => line.trim());
  const records = () => lines().map((line) => JSON.parse(line) as LogLine);
  return {
    stream,
    /** Everything written, as written. */
    text: () => text,
    /** Each line, parsed. */
    records,
    /** Lines at warn or above. */
    warnings: () => records().filter((line) => line.level >= warnLevel),
    clear: () => {
      text = '';
    },
  };
}
