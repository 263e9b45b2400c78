// Approvals: the tool calls waiting for a person, with Approve and Reject, kept current by the live events.

import { decisionControls } from './decision.js';
import { byId, h, pretty, say, sayFailure, time } from './dom.js';
import { showRequest } from './request.js';

const pageSize = 50;

export function createApprovalsPanel(context) {
  const { api, scopes } = context;
  const panel = byId('panel-approvals');
  const list = byId('approvals-list');
  const statusLine = byId('approvals-status-line');
  const statusSelect = byId('approvals-status');
  const more = byId('approvals-more');
  const count = byId('pending-count');
  let cursor = null;
  let generation = 0;
  let reloadTimer;
  /** The request a card's console link named, shown above the list. */
  let request;
  /** The card just decided here: its buttons were disabled, so it no longer holds the focus to follow. */
  let decidedHere;

  async function load({ append = false } = {}) {
    const mine = ++generation;
    const status = statusSelect.value;
    const params = new URLSearchParams({ status, limit: String(pageSize) });
    if (append && cursor) params.set('cursor', cursor);
    list.setAttribute('aria-busy', 'true');
    try {
      const page = await api.json(`/approvals?${params}`);
      if (mine !== generation) return;
      show(page.items, append);
      cursor = page.nextCursor;
      more.hidden = !cursor;
      const shown = list.querySelectorAll('article').length;
      if (status === 'pending') showCount(shown, Boolean(cursor));
      else void refreshCount();
    } catch (error) {
      if (mine === generation) sayFailure(statusLine, error, context);
    } finally {
      if (mine === generation) list.removeAttribute('aria-busy');
    }
  }

  /**
   * Updates the list in place: cards still listed are kept as they are (an open reject form, what was typed
   * and the keyboard focus survive a live refresh); gone ones leave; new ones come in at their place.
   */
  function show(items, append) {
    const current = new Map(
      [...list.querySelectorAll('article')].map((node) => [node.dataset.approvalId, node]),
    );
    // A card is redrawn when it was decided. An approval counted toward its quorum updates it in place, so that a
    // reject form someone is filling in stays open.
    const kept = (item) => {
      const node = current.get(item.id);
      if (!node || node.dataset.status !== item.status) return card(item);
      if (node.dataset.votes !== String(item.votes.length)) recount(node, item);
      return node;
    };
    const wanted = append
      ? [...current.values(), ...items.filter((item) => !current.has(item.id)).map(card)]
      : items.map(kept);
    const focused = document.activeElement;
    let lostFocusAt = -1;
    [...list.children].forEach((node, index) => {
      if (wanted.includes(node)) return;
      const decided = decidedHere !== undefined && node.dataset.approvalId === decidedHere;
      if (decided || node.contains(focused)) lostFocusAt = index;
      node.remove();
    });
    if (!wanted.some((node) => node.dataset.approvalId === decidedHere)) decidedHere = undefined;
    let next = list.firstElementChild;
    for (const node of wanted) {
      if (node === next) next = next.nextElementSibling;
      else list.insertBefore(node, next);
    }
    if (wanted.length === 0) list.append(h('p', { class: 'empty' }, `No ${statusSelect.value} approvals.`));
    // The card being worked on left (decided here or elsewhere): go to the card now in its place, never to
    // a button, so that a key press meant for the old card cannot decide another one.
    if (lostFocusAt !== -1 && !panel.hidden) {
      const cards = list.querySelectorAll('article');
      (cards[Math.min(lostFocusAt, cards.length - 1)] ?? byId('approvals-heading')).focus();
    }
  }

  /** A waiting card after an approval was counted: its Approvals line, and no buttons for a key that gave one. */
  function recount(node, item) {
    node.dataset.votes = String(item.votes.length);
    const line = node.querySelector('.approvals-count');
    if (line) line.textContent = approvals(item);
    const decision = node.querySelector('.decision');
    if (!decision || item.mayDecide !== false) return;
    const hadFocus = decision.contains(document.activeElement) || decidedHere === item.id;
    decision.replaceWith(controls(item, `approval-${item.id}`));
    if (hadFocus) node.focus();
  }

  function showCount(pending, moreThanShown) {
    count.textContent = pending > 0 ? `(${pending}${moreThanShown ? '+' : ''} pending)` : '';
  }

  async function refreshCount() {
    try {
      const page = await api.json('/approvals?status=pending&limit=200');
      showCount(page.items.length, Boolean(page.nextCursor));
    } catch {
      // The count is a hint; the list reports failures.
    }
  }

  function reloadSoon() {
    clearTimeout(reloadTimer);
    reloadTimer = setTimeout(() => {
      void load();
      void request?.reload();
    }, 100);
  }

  function card(item) {
    const headingId = `approval-${item.id}`;
    const pending = item.status === 'pending';
    const decider = item.decidedBy ? (item.decidedBy.name ?? item.decidedBy.id) : '—';
    return h(
      'article',
      {
        class: 'approval',
        tabindex: -1,
        'aria-labelledby': headingId,
        dataset: { approvalId: item.id, status: item.status, votes: String(item.votes.length) },
      },
      h(
        'h3',
        { id: headingId },
        item.toolName,
        ' ',
        h('span', { class: `badge risk-${item.risk}` }, `${item.risk} risk`),
      ),
      h('p', { class: 'summary' }, item.summary),
      h(
        'dl',
        { class: 'facts' },
        fact('Requested by', item.requestedBy?.name ?? item.requestedBy?.id ?? '—'),
        fact('Conversation', h('code', {}, item.conversationKey)),
        item.agent ? fact('Agent', item.agent.name ?? String(item.agent)) : null,
        fact('Requested', time(item.createdAt)),
        pending ? fact('Expires', time(item.expiresAt)) : fact('Status', item.status),
        item.quorum > 1 ? fact('Approvals', h('span', { class: 'approvals-count' }, approvals(item))) : null,
        pending ? null : fact('Decided', [time(item.decidedAt), ` by ${decider}`]),
        item.reason ? fact('Reason', item.reason) : null,
        pending ? null : fact('Outcome', outcome(item)),
      ),
      h('p', { class: 'label' }, 'Arguments'),
      h('pre', { class: 'arguments' }, pretty(item.arguments)),
      pending ? controls(item, headingId) : null,
    );
  }

  /** Approve and Reject where this key may decide; otherwise why not, so nobody clicks for a refusal. */
  function controls(item, headingId) {
    if (!scopes.approve) return null;
    if (item.mayDecide === false)
      return h('p', { class: 'not-yours' }, `You cannot decide this one: ${item.whyNot ?? 'not allowed.'}`);
    return decisionControls({
      id: `approvals-${item.id}`,
      describedBy: headingId,
      onDecide: (decision, reason) => decide(item, decision, reason),
    });
  }

  /** Decides one approval; false when it failed (the buttons come back). */
  async function decide(item, decision, reason) {
    let ok = true;
    try {
      const result = await api.json(`/approvals/${encodeURIComponent(item.id)}/decision`, {
        method: 'POST',
        body: { decision, ...(reason ? { reason } : {}) },
      });
      const done = decision === 'approve' ? 'Approved' : 'Rejected';
      say(statusLine, `${done} ${item.toolName}${result.message ? `: ${result.message}` : '.'}`, 'success');
    } catch (error) {
      ok = false;
      sayFailure(statusLine, error, context);
    }
    decidedHere = item.id;
    await load();
    // Still listed (the decision failed): its buttons come back and hold the focus again.
    if (!ok) decidedHere = undefined;
    return ok;
  }

  byId('approvals-filter').addEventListener('submit', (event) => {
    event.preventDefault();
    void load();
  });
  statusSelect.addEventListener('change', () => void load());
  more.addEventListener('click', () => void load({ append: true }));
  void load();

  return {
    show() {},
    /** Shows one request whole (`{kind: 'approval' | 'batch', id}`) above the list. */
    showRequest(target) {
      request?.remove();
      request = showRequest(context, target, { onDecided: () => void load() });
    },
    onReconnect: reloadSoon,
    onLiveEvent(event) {
      if (event.type === 'approval_requested') {
        say(statusLine, `New approval waiting: ${event.toolName} (${event.risk} risk).`);
        reloadSoon();
      } else if (event.type === 'approval_decided') {
        const verb = String(event.decision).startsWith('reject') ? 'rejected' : 'approved';
        say(statusLine, `${event.toolName} was ${verb} by ${event.decidedBy}.`);
        reloadSoon();
      } else if (event.type === 'approval_voted') {
        say(
          statusLine,
          `${event.votedBy} approved ${event.toolName}: ${event.votes} of ${event.quorum} approvals, it waits for more.`,
        );
        reloadSoon();
      } else if (event.type === 'approval_expired') {
        say(statusLine, `An approval for ${event.toolName} expired.`);
        reloadSoon();
      }
    },
    close() {
      clearTimeout(reloadTimer);
    },
  };
}

/** What came of a decided call: whether the tool ran, and how it went. */
function outcome(item) {
  if (item.status === 'rejected') return 'never ran (rejected)';
  if (item.status === 'expired') return 'never ran (expired)';
  const result = item.result
    ? `: ${item.result.length > 300 ? `${item.result.slice(0, 299)}…` : item.result}`
    : '';
  switch (item.execution) {
    case 'succeeded':
      return `ran, succeeded${result}`;
    case 'failed':
      return `ran, failed${result}`;
    case 'skipped':
      return `never ran${result}`;
    case 'running':
      return 'running, or stopped by a restart before it reported';
    default:
      return 'approved; the turn continues and runs it';
  }
}

/** A call that needs several approvers: how many it has of how many, and whose. */
function approvals(item) {
  const who = item.votes.map((vote) => vote.name ?? vote.id).join(', ');
  return `${item.votes.length} of ${item.quorum}${who ? `: ${who}` : ''}`;
}

function fact(term, value) {
  return [h('dt', {}, term), h('dd', {}, value)];
}
