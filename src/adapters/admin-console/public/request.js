// One approval request as a card's console link names it (`#approval=<id>`, `#batch=<id>`): every call with
// its arguments whole, as Butler stored them, with Approve and Reject for calls still pending.

import { decisionControls } from './decision.js';
import { byId, h, say, sayFailure, time } from './dom.js';

/** The request the page's address names, or undefined. */
export function requestInAddress() {
  const match = /^#(approval|batch)=([^&]+)$/.exec(location.hash);
  if (!match) return undefined;
  return { kind: match[1], id: decodeURIComponent(match[2]) };
}

function outcome(call) {
  const who = call.decidedBy ? (call.decidedBy.name ?? call.decidedBy.id) : 'someone';
  // Who may decide, and for a call that needs several approvers, whose approvals it has so far.
  if (call.status === 'pending') return `Waiting for a decision by ${call.whoMayApprove}`;
  if (call.status === 'expired') return 'Expired: nothing was run';
  if (call.status === 'approved') return `Approved by ${who}`;
  return `Rejected by ${who}${call.reason ? `: ${call.reason}` : ''}`;
}

/**
 * Shows the named request above the approvals list; `onDecided` runs after a decision made here (the list
 * reloads). Returns `reload()` (live events) and `remove()` (another request is named).
 */
export function showRequest(context, target, { onDecided }) {
  const { api, scopes } = context;
  const container = h('section', {
    id: 'approval-request',
    class: 'request',
    'aria-labelledby': 'approval-request-heading',
    tabindex: -1,
  });
  byId('approvals-filter').before(container);
  const statusLine = h('p', { class: 'status-line', role: 'status', 'aria-live': 'polite' });
  const path =
    target.kind === 'batch'
      ? `/approval-batches/${encodeURIComponent(target.id)}`
      : `/approvals/${encodeURIComponent(target.id)}`;

  async function load() {
    container.setAttribute('aria-busy', 'true');
    try {
      render(await api.json(path));
    } catch (error) {
      container.replaceChildren(heading('Approval request'), statusLine);
      sayFailure(statusLine, error, context);
    } finally {
      container.removeAttribute('aria-busy');
    }
  }

  function heading(text) {
    return h(
      'div',
      { class: 'request-heading' },
      h('h3', { id: 'approval-request-heading' }, text),
      h('button', { type: 'button', class: 'secondary', onclick: close }, 'Close'),
    );
  }

  function render(request) {
    const requesters = request.requesters.map((user) => user.name ?? user.id).join(', ');
    const count = request.calls.length;
    container.replaceChildren(
      heading(count === 1 ? 'Approval request' : `Approval request: ${count} calls`),
      h(
        'p',
        { class: 'summary' },
        `Asked by ${requesters} · expires `,
        time(request.expiresAt),
        ' · the arguments as Butler stored them: what runs if approved.',
      ),
      statusLine,
      ...request.calls.map(callCard),
    );
    container.focus();
  }

  function callCard(call, index) {
    const headingId = `request-call-${call.approvalId}`;
    const pending = call.status === 'pending';
    return h(
      'article',
      { class: 'approval', dataset: { requestCall: call.approvalId, status: call.status } },
      h(
        'h4',
        { id: headingId },
        `${index + 1}. ${call.toolName} `,
        h('span', { class: `badge risk-${call.risk}` }, `${call.risk} risk`),
      ),
      h('p', { class: 'summary' }, call.summary),
      h('p', {}, outcome(call)),
      h('p', { class: 'label' }, `Arguments (${call.argumentsLength.toLocaleString()} characters)`),
      h('pre', { class: 'arguments' }, call.argumentsJson),
      pending && scopes.approve
        ? decisionControls({
            id: `request-${call.approvalId}`,
            describedBy: headingId,
            onDecide: (decision, reason) => decide(call, decision, reason),
          })
        : null,
    );
  }

  async function decide(call, decision, reason) {
    try {
      const result = await api.json(`/approvals/${encodeURIComponent(call.approvalId)}/decision`, {
        method: 'POST',
        body: { decision, ...(reason ? { reason } : {}) },
      });
      const done = decision === 'approve' ? 'Approved' : 'Rejected';
      say(statusLine, `${done} ${call.toolName}${result.message ? `: ${result.message}` : '.'}`, 'success');
    } catch (error) {
      sayFailure(statusLine, error, context);
      return false;
    }
    onDecided();
    await load();
    return true;
  }

  function close() {
    container.remove();
    // The address no longer names the request: a reload shows the list alone.
    history.replaceState(null, '', location.pathname + location.search);
    byId('approvals-heading').focus();
  }

  void load();
  return { reload: load, remove: () => container.remove() };
}
