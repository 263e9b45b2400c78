// Feedback: the latest ratings of Butler's replies (👍 / 👎, who, their comment, when, where), shown beside usage.

import { byId, h, say, sayFailure, time } from './dom.js';

const shown = 20;
const ratings = { positive: '👍 helped', negative: '👎 missed' };

export function createFeedbackList(context) {
  const rows = byId('feedback-rows');
  const statusLine = byId('feedback-status-line');

  function row(item) {
    const who = item.rater.name
      ? `${item.rater.name} (${item.rater.platform})`
      : `${item.rater.platform}:${item.rater.id}`;
    return h(
      'tr',
      {},
      h('td', {}, ratings[item.rating] ?? item.rating),
      h('td', {}, who),
      h('td', {}, item.comment ?? ''),
      h('td', {}, time(item.updatedAt)),
      h('td', {}, h('code', {}, item.conversationKey)),
    );
  }

  return {
    async load() {
      try {
        const page = await context.api.json(`/feedback?limit=${shown}`);
        const items = page.items ?? [];
        say(statusLine, items.length === 0 ? 'No feedback yet.' : '');
        rows.replaceChildren(...items.map(row));
      } catch (error) {
        sayFailure(statusLine, error, context);
      }
    },
  };
}
