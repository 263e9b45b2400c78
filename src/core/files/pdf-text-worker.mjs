// The worker thread that reads a PDF's text (pdf-reader.ts starts it). Plain JavaScript: a worker thread
// starts without the TypeScript loader the service runs under. pdf.js is slow on crafted files (one page of
// 200,000 text operators takes seconds): here it can use a core for as long as its deadline allows, never the
// service's event loop, and it stops reading at the page and character limits instead of after them.
import { parentPort } from 'node:worker_threads';

const { getDocumentProxy } = await import('unpdf');

/** Text items of one page, read as pdf.js streams them, until `room` characters are taken. */
async function pageText(page, room) {
  const reader = page.streamTextContent().getReader();
  let text = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      for (const item of value.items) {
        if (typeof item.str === 'string') text += item.hasEOL ? `${item.str}\n` : item.str;
      }
      if (text.length > room) return { text, cut: true };
    }
  } finally {
    // Not awaited: pdf.js settles a cancelled stream only once its producer is done with the page.
    reader.cancel().catch(() => {});
  }
  return { text, cut: false };
}

// The document is never destroyed: pdf.js waits for a cancelled text stream to drain first, and the reader
// ends this thread (and all it holds) once it has the result.
async function read({ bytes, maxPages, maxChars }) {
  const pdf = await getDocumentProxy(bytes);
  const pages = Math.min(pdf.numPages, maxPages);
  const texts = [];
  let length = 0;
  let readPages = 0;
  let cut = false;
  for (let number = 1; number <= pages && !cut; number++) {
    // Past the character limit a little: the caller cuts at a character boundary and says how much was left.
    const page = await pageText(await pdf.getPage(number), maxChars - length + 1);
    texts.push(page.text);
    length += page.text.length + 2;
    readPages = number;
    cut = page.cut || length > maxChars;
  }
  return { text: texts.join('\n\n').trim(), pages: pdf.numPages, readPages, cut };
}

parentPort?.on('message', (job) => {
  read(job).then(
    (result) => parentPort?.postMessage({ id: job.id, result }),
    (error) =>
      parentPort?.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) }),
  );
});
