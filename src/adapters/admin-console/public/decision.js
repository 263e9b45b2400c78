// Approve and Reject buttons for one approval; Reject first asks for an optional reason.

import { h } from './dom.js';

/**
 * `onDecide(decision, reason)` runs on a click; the buttons stay disabled while it does, and come back if
 * it returns false (the decision failed and may be tried again). `describedBy` names the element that says
 * which call the buttons decide, so that each button reads as "Approve, restart_service…".
 */
export function decisionControls({ id, describedBy, onDecide }) {
  const reasonId = `reason-${id}`;
  const formId = `reject-${id}`;
  const reason = h('input', {
    id: reasonId,
    name: 'reason',
    type: 'text',
    maxlength: 2000,
    autocomplete: 'off',
  });
  const buttons = () => [...controls.querySelectorAll('button')];

  async function decide(decision, why) {
    for (const button of buttons()) button.disabled = true;
    const ok = await onDecide(decision, why);
    if (ok === false) for (const button of buttons()) button.disabled = false;
  }

  const approve = h(
    'button',
    {
      type: 'button',
      class: 'approve',
      'aria-describedby': describedBy,
      onclick: () => void decide('approve'),
    },
    'Approve',
  );
  const reject = h(
    'button',
    {
      type: 'button',
      class: 'danger reject',
      'aria-describedby': describedBy,
      'aria-expanded': 'false',
      'aria-controls': formId,
      onclick: () => {
        form.hidden = false;
        reject.setAttribute('aria-expanded', 'true');
        reason.focus();
      },
    },
    'Reject…',
  );
  const form = h(
    'form',
    {
      id: formId,
      class: 'reject-form',
      hidden: true,
      onsubmit: (event) => {
        event.preventDefault();
        void decide('reject', reason.value.trim() || undefined);
      },
    },
    h('label', { for: reasonId }, 'Reason for rejecting (optional)'),
    reason,
    h('button', { type: 'submit', class: 'danger', 'aria-describedby': describedBy }, 'Confirm rejection'),
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        onclick: () => {
          form.hidden = true;
          reject.setAttribute('aria-expanded', 'false');
          reject.focus();
        },
      },
      'Cancel',
    ),
  );
  form.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape') return;
    form.hidden = true;
    reject.setAttribute('aria-expanded', 'false');
    reject.focus();
  });
  const controls = h('div', { class: 'decision' }, h('div', { class: 'actions' }, approve, reject), form);
  return controls;
}
