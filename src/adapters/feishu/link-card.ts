import type { PrivateLink } from '../../core/contracts/adapter.js';
import { plainText } from './approval-buttons.js';
import type { JsonRecord } from './fields.js';

/** A card with one link button (a Connect link), for a person's direct chat. */
export function linkCard(link: PrivateLink): JsonRecord {
  return {
    schema: '2.0',
    config: { summary: { content: link.label } },
    body: {
      elements: [
        { tag: 'div', text: plainText(link.text) },
        {
          tag: 'button',
          element_id: 'private_link',
          type: 'primary',
          text: plainText(link.label),
          behaviors: [{ type: 'open_url', default_url: link.url }],
        },
      ],
    },
  };
}
