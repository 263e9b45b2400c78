import { extname } from 'node:path';
import type { FileBytes, FileKind } from '../contracts/files.js';
import { cleanText, formatBytes, graphemePrefix } from '../text/index.js';
import { countTextTokens } from '../text/tokens.js';
import type { PdfReader } from './pdf-reader.js';

/**
 * What the model can take of one file: images as a smaller JPEG (sharp, on libvips' own threads), PDFs as their
 * text (unpdf's pdf.js, in a worker thread: pdf-reader.ts), text, CSV, JSON and code as text; anything else only
 * by name, type and size. Both decoders run off the event loop with a deadline, and load on first use, so a
 * Butler that never sees a file never pays for them.
 */

export interface ReadLimits {
  /** Pages of a PDF read at most. */
  maxPdfPages: number;
  /** Characters of text kept at most (after extraction). */
  maxChars: number;
  /** Longest side of the copy of an image the model gets, in pixels. */
  imageMaxSide: number;
  /** Whether the model can see images; if not, an image is only described. */
  vision: boolean;
  /** Longest an image may take to decode and shrink, in seconds (PDFs: the PdfReader's deadline). */
  imageSeconds: number;
}

export interface ReadResult {
  kind: FileKind;
  /** What the bytes are (sniffed), else what the platform said. */
  mimeType: string;
  text: string | null;
  preview?: { bytes: Uint8Array; mimeType: string };
  /** Estimated prompt tokens of what the model gets (text, or image tiles). */
  tokens: number;
  /** One line: name, type, size, pages or characters. */
  description: string;
  /** What was left out, said to the person ("read the first 50 of 120 pages"). */
  note?: string;
}

/** Sources, markup and data people paste as files: read as text when the bytes are valid UTF-8. */
const textExtensions = new Set(
  `.txt .md .markdown .csv .tsv .json .jsonl .ndjson .yaml .yml .toml .ini .cfg .conf .env .log .xml .html .htm
  .css .scss .js .mjs .cjs .ts .tsx .jsx .py .rb .go .rs .java .kt .kts .scala .c .h .cc .cpp .hpp .cs .swift .m
  .php .pl .sh .bash .zsh .fish .ps1 .sql .graphql .proto .r .lua .dart .ex .exs .erl .hs .clj .vue .svelte
  .dockerfile .tf .hcl .gradle .properties .diff .patch .srt .vtt .tex .rst .adoc .org`.split(/\s+/),
);
const textMimeTypes =
  /^(text\/|application\/(json|[\w.+-]*\+json|xml|[\w.+-]*\+xml|x-yaml|yaml|x-sh|javascript|x-ndjson|sql|toml))/;
const imageTypes: Record<string, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

/** The type the first bytes say, for the formats Butler reads specially. */
export function sniffMimeType(bytes: Uint8Array): string | undefined {
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  if (bytes[0] === 0x89 && ascii(1, 4) === 'PNG') return imageTypes.png;
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return imageTypes.jpeg;
  if (ascii(0, 4) === 'GIF8') return imageTypes.gif;
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return imageTypes.webp;
  if (ascii(0, 5) === '%PDF-') return 'application/pdf';
  return undefined;
}

function decodeText(file: FileBytes, mimeType: string): string | undefined {
  const looksLikeText =
    textMimeTypes.test(mimeType) ||
    textExtensions.has(extname(file.name).toLowerCase()) ||
    /^(dockerfile|makefile|readme|license)$/i.test(file.name);
  if (!looksLikeText && mimeType !== 'application/octet-stream' && mimeType !== '') return undefined;
  if (file.bytes.subarray(0, 8192).includes(0)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(file.bytes).replace(/^\uFEFF/, '');
  } catch {
    return undefined;
  }
}

/** Cuts text to `maxChars`, saying so. */
function keepText(text: string, maxChars: number): { text: string; note?: string } {
  const clean = cleanText(text);
  if (clean.length <= maxChars) return { text: clean };
  return {
    text: graphemePrefix(clean, maxChars),
    note: `read the first ${maxChars.toLocaleString('en-US')} of its ${clean.length.toLocaleString('en-US')} characters`,
  };
}

/** OpenAI's estimate for a high-detail image: 85 tokens plus 170 per 512-pixel tile. */
const imageTokens = (width: number, height: number) =>
  85 + 170 * Math.ceil(width / 512) * Math.ceil(height / 512);

async function previewImage(bytes: Uint8Array, maxSide: number, seconds: number) {
  const { default: sharp } = await import('sharp');
  // A small file can claim a huge canvas (a decompression bomb): refuse past 50 megapixels, and past a deadline.
  const { data, info } = await sharp(bytes, { limitInputPixels: 50_000_000 })
    .timeout({ seconds })
    .rotate()
    .resize({ width: maxSide, height: maxSide, fit: 'inside', withoutEnlargement: true })
    .flatten({ background: '#ffffff' })
    .jpeg({ quality: 80 })
    .toBuffer({ resolveWithObject: true });
  return { bytes: new Uint8Array(data), width: info.width, height: info.height };
}

/**
 * Reads a file for the model. Throws when a file that says it is an image or a PDF cannot be read, and
 * FileReadLimitError when reading it would take too long or too much memory.
 */
export async function readFileForModel(
  file: FileBytes,
  limits: ReadLimits,
  pdfs: PdfReader,
): Promise<ReadResult> {
  const mimeType = sniffMimeType(file.bytes) ?? (file.mimeType || 'application/octet-stream');
  const size = formatBytes(file.bytes.byteLength);
  if (mimeType.startsWith('image/') && Object.values(imageTypes).includes(mimeType)) {
    if (!limits.vision)
      return {
        kind: 'image',
        mimeType,
        text: null,
        tokens: 0,
        description: `${file.name} (image, ${size}; the model here cannot see images)`,
        note: 'cannot see images with the model I use, so I know only its name',
      };
    const preview = await previewImage(file.bytes, limits.imageMaxSide, limits.imageSeconds);
    return {
      kind: 'image',
      mimeType,
      text: null,
      preview: { bytes: preview.bytes, mimeType: 'image/jpeg' },
      tokens: imageTokens(preview.width, preview.height),
      description: `${file.name} (image, ${preview.width}×${preview.height} as shown, ${size})`,
    };
  }
  if (mimeType === 'application/pdf') {
    const pdf = await pdfs.read(file.bytes, { maxPages: limits.maxPdfPages, maxChars: limits.maxChars });
    const kept = keepText(pdf.text, limits.maxChars);
    const notes = [
      ...(pdf.readPages < pdf.pages ? [`read the first ${pdf.readPages} of its ${pdf.pages} pages`] : []),
      ...(kept.note ? [kept.note] : []),
      ...(pdf.text.length === 0 ? ['found no text in it (a scan?)'] : []),
    ];
    return {
      kind: 'text',
      mimeType,
      text: kept.text,
      tokens: countTextTokens(kept.text),
      description: `${file.name} (PDF, ${pdf.pages} page${pdf.pages === 1 ? '' : 's'}, ${size})`,
      ...(notes.length > 0 ? { note: notes.join('; ') } : {}),
    };
  }
  const decoded = decodeText(file, mimeType);
  if (decoded !== undefined) {
    const kept = keepText(decoded, limits.maxChars);
    const textType = mimeType === 'application/octet-stream' ? 'text/plain' : mimeType;
    return {
      kind: 'text',
      mimeType: textType,
      text: kept.text,
      tokens: countTextTokens(kept.text),
      description: `${file.name} (${textType}, ${decoded.length.toLocaleString('en-US')} characters, ${size})`,
      ...(kept.note ? { note: kept.note } : {}),
    };
  }
  return {
    kind: 'other',
    mimeType,
    text: null,
    tokens: 0,
    description: `${file.name} (${mimeType}, ${size}; not a format Butler reads)`,
  };
}
