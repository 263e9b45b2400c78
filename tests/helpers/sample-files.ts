import { PDFDocument, StandardFonts } from 'pdf-lib';
import sharp from 'sharp';

/** Real files for tests, made fresh: a PNG, a PDF with text on each page, a CSV. */

export async function makePng(width = 640, height = 480, background = '#336699'): Promise<Uint8Array> {
  return new Uint8Array(
    await sharp({ create: { width, height, channels: 3, background } })
      .png()
      .toBuffer(),
  );
}

/** A PDF whose page n says `lines[n]`. */
export async function makePdf(lines: readonly string[]): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  for (const line of lines) document.addPage().drawText(line, { x: 50, y: 700, size: 14, font });
  return document.save();
}

export const sampleCsv = 'service,errors\napi,12\nworker,0\n';

/**
 * A small PDF that is slow to read: one page whose Flate-compressed content stream holds `operators` text
 * operators (the security review's 37 KB file held 200,000 and froze a pdf.js on the main thread for seconds),
 * each showing `glyphs` (none by default: no character limit stops the reading early).
 */
export async function makeDensePdf(operators: number, glyphs = ''): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  const page = document.addPage();
  const fontName = page.node.newFontDictionary('F1', font.ref);
  const body = `BT /${fontName.asString().slice(1)} 1 Tf 0 0 Td ${`(${glyphs})Tj `.repeat(operators)}ET`;
  const stream = document.context.flateStream(body);
  page.node.addContentStream(document.context.register(stream));
  return document.save();
}
