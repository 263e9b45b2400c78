// A section that lists what one GET of the API returns (`{ items }`), one table row each: hidden while the list is
// empty, a failure said in its status line. Live events reload it often: only the latest answer is shown.

import { byId, say, sayFailure } from './dom.js';

export function listSection(context, { path, section, rows, statusLine, row }) {
  const box = byId(section);
  const body = byId(rows);
  const status = byId(statusLine);
  let generation = 0;
  return {
    async load() {
      const mine = ++generation;
      try {
        const { items = [] } = await context.api.json(path);
        if (mine !== generation) return;
        box.hidden = items.length === 0;
        say(status, '');
        body.replaceChildren(...items.map(row));
      } catch (error) {
        if (mine !== generation) return;
        box.hidden = false;
        sayFailure(status, error, context);
      }
    },
  };
}
