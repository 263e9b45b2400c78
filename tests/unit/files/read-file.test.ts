import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { PdfReader } from '../../../src/core/files/pdf-reader.js';
import { type ReadLimits, readFileForModel, sniffMimeType } from '../../../src/core/files/read-file.js';
import { responseFile } from '../../../src/core/tools/http-file.js';
import { makePdf, makePng, sampleCsv } from '../../helpers/sample-files.js';

const limits: ReadLimits = {
  maxPdfPages: 3,
  maxChars: 1000,
  imageMaxSide: 256,
  vision: true,
  imageSeconds: 10,
};
const pdfs = new PdfReader({ deadlineMs: 10_000, memoryMb: 256, parallel: 2 });
const file = (name: string, mimeType: string, bytes: Uint8Array | string) => ({
  name,
  mimeType,
  bytes: typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes,
});

describe('reading a file for the model', () => {
  it('knows images and PDFs by their bytes, whatever the platform said', async () => {
    const png = await makePng(10, 10);
    expect(sniffMimeType(png)).toBe('image/png');
    expect(sniffMimeType(await makePdf(['x']))).toBe('application/pdf');
    expect(sniffMimeType(new TextEncoder().encode('hello'))).toBeUndefined();
    const read = await readFileForModel(file('upload.bin', 'application/octet-stream', png), limits, pdfs);
    expect(read).toMatchObject({ kind: 'image', mimeType: 'image/png' });
  });

  it('shrinks an image to the longest side allowed, as a JPEG, and counts its tiles', async () => {
    const read = await readFileForModel(
      file('wide.png', 'image/png', await makePng(1024, 300)),
      limits,
      pdfs,
    );
    expect(read.preview?.mimeType).toBe('image/jpeg');
    const shown = await sharp(Buffer.from(read.preview?.bytes ?? [])).metadata();
    expect([shown.format, shown.width, shown.height]).toEqual(['jpeg', 256, 75]);
    expect(read.tokens).toBe(85 + 170);
    expect(read.description).toMatch(/^wide\.png \(image, 256×75 as shown, \d+ K?B\)$/);
  });

  it('never enlarges a small image', async () => {
    const read = await readFileForModel(file('icon.png', 'image/png', await makePng(32, 16)), limits, pdfs);
    const shown = await sharp(Buffer.from(read.preview?.bytes ?? [])).metadata();
    expect([shown.width, shown.height]).toEqual([32, 16]);
  });

  it('refuses an image that claims more pixels than it may decode', async () => {
    // 10,000 × 10,000 of one colour compresses to a few kilobytes: a decompression bomb in miniature.
    const bomb = new Uint8Array(
      await sharp({ create: { width: 10_000, height: 10_000, channels: 3, background: '#000' } })
        .png({ compressionLevel: 9 })
        .toBuffer(),
    );
    await expect(readFileForModel(file('bomb.png', 'image/png', bomb), limits, pdfs)).rejects.toThrow(
      /pixel/i,
    );
  });

  it('reads a PDF page by page up to the page limit, and says what it left out', async () => {
    const pdf = await makePdf(['alpha', 'beta', 'gamma', 'delta', 'epsilon']);
    const read = await readFileForModel(file('report.pdf', 'application/pdf', pdf), limits, pdfs);
    expect(read.text).toBe('alpha\n\nbeta\n\ngamma');
    expect(read.note).toBe('read the first 3 of its 5 pages');
    expect(read.description).toMatch(/^report\.pdf \(PDF, 5 pages, \d+ K?B\)$/);
  });

  it('fails on a file that says it is a PDF but is not one', async () => {
    const broken = new TextEncoder().encode('%PDF-1.7\nthis is not really a PDF');
    await expect(
      readFileForModel(file('broken.pdf', 'application/pdf', broken), limits, pdfs),
    ).rejects.toThrow();
  });

  it('reads CSV, JSON and code as text, cut to the character limit', async () => {
    const csv = await readFileForModel(file('errors.csv', 'text/csv', sampleCsv), limits, pdfs);
    expect(csv).toMatchObject({ kind: 'text', text: sampleCsv });
    const code = await readFileForModel(
      file('main.py', 'application/octet-stream', 'print("hi")\n'),
      limits,
      pdfs,
    );
    expect(code).toMatchObject({ kind: 'text', mimeType: 'text/plain', text: 'print("hi")\n' });
    const long = await readFileForModel(file('log.txt', 'text/plain', `${'é'.repeat(1500)}`), limits, pdfs);
    expect(long.text).toHaveLength(1000);
    expect(long.note).toBe('read the first 1,000 of its 1,500 characters');
  });

  it('describes what it cannot read by name, type and size', async () => {
    const zip = new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0, 0, 0xff, 0xfe]);
    const read = await readFileForModel(file('backup.zip', 'application/zip', zip), limits, pdfs);
    expect(read).toMatchObject({ kind: 'other', text: null, tokens: 0 });
    expect(read.description).toBe('backup.zip (application/zip, 8 B; not a format Butler reads)');
  });

  it('only names an image when the model cannot see', async () => {
    const read = await readFileForModel(
      file('p.png', 'image/png', await makePng(8, 8)),
      { ...limits, vision: false },
      pdfs,
    );
    expect(read).toMatchObject({
      kind: 'image',
      tokens: 0,
      note: 'cannot see images with the model I use, so I know only its name',
    });
    expect(read.preview).toBeUndefined();
  });
});

describe('an HTTP tool answer that is a file', () => {
  const url = new URL('https://tools.example/v1/render');
  const headers = (entries: Record<string, string>) => new Headers(entries);

  it('is text when JSON or text, a file when an image, a PDF or an attachment', () => {
    expect(responseFile(headers({ 'content-type': 'application/json' }), url, 't')).toBeUndefined();
    expect(responseFile(headers({ 'content-type': 'text/plain; charset=utf-8' }), url, 't')).toBeUndefined();
    expect(responseFile(headers({ 'content-type': 'application/problem+json' }), url, 't')).toBeUndefined();
    expect(responseFile(headers({ 'content-type': 'image/png' }), url, 'chart')).toEqual({
      name: 'chart.png',
      mimeType: 'image/png',
    });
    expect(
      responseFile(headers({ 'content-type': 'text/csv', 'content-disposition': 'attachment' }), url, 'x'),
    ).toEqual({ name: 'x.csv', mimeType: 'text/csv' });
  });

  it('takes the name from Content-Disposition (filename* first), never a path', () => {
    const named = (disposition: string) =>
      responseFile(
        headers({ 'content-type': 'application/pdf', 'content-disposition': disposition }),
        url,
        't',
      )?.name;
    expect(named('attachment; filename="Q3 report.pdf"')).toBe('Q3 report.pdf');
    expect(named("attachment; filename=fallback.pdf; filename*=UTF-8''%E6%8A%A5%E5%91%8A.pdf")).toBe(
      '报告.pdf',
    );
    expect(named('attachment; filename="../../etc/passwd"')).toBe('passwd');
    expect(named('attachment; filename="..\\\\secret.pdf"')).toBe('secret.pdf');
    expect(named('inline')).toBe('t.pdf');
  });
});
