/** The text room's door: cleaning what enters Butler, cutting what leaves it, showing it (and sizes) as people read it. */
export { cleanJson, cleanText, StreamingTextCleaner } from './clean.js';
export { graphemePrefix, truncateText } from './cut.js';
export { displayName, joinNames, markdownToPlainText, visibleControls } from './display.js';
export { formatBytes } from './sizes.js';
