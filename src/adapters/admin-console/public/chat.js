// A chat box over the API's server-sent events: the reply streams in, tool calls and results show as they
// happen, and a call that needs approval shows Approve / Reject when this key may decide.

import { decisionControls } from './decision.js';
import { byId, formatNumber, h, pretty, say, sayFailure, time } from './dom.js';

const conversationStorageKey = 'butler.console.conversation';
const idPattern = /^[A-Za-z0-9._-]{1,128}$/;

/** A fresh conversation id; getRandomValues works on plain http too, where randomUUID does not. */
function newConversationId() {
  const bytes = crypto.getRandomValues(new Uint8Array(4));
  return `console-${[...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}

export function createChatPanel(context) {
  const { api, scopes } = context;
  const transcript = byId('chat-transcript');
  const statusLine = byId('chat-status-line');
  const form = byId('chat-form');
  const idInput = byId('chat-conversation');
  const messageInput = byId('chat-message');
  const sendButton = byId('chat-send');
  let controller;
  let lastEventId;
  /** The reply being streamed: its text element. */
  let reply;
  /** The approval this conversation waits on, if any. */
  let parkedOn;
  let streaming = false;

  idInput.value = sessionStorage.getItem(conversationStorageKey) ?? newConversationId();

  function entry(kind, who, ...content) {
    const element = h('div', { class: `entry entry-${kind}` }, h('p', { class: 'who' }, who), ...content);
    transcript.append(element);
    scrollToEnd();
    return element;
  }

  /** Keeps the newest entry in view inside the transcript, without scrolling the page. */
  function scrollToEnd() {
    transcript.scrollTop = transcript.scrollHeight;
  }

  function setStreaming(value) {
    streaming = value;
    sendButton.disabled = value;
    transcript.setAttribute('aria-busy', String(value));
  }

  /**
   * Reads one stream of this conversation's events to its end (a turn's end, or the server closing it).
   * `waiting`: the turn waits on someone, and the person may write meanwhile (a new message takes over).
   */
  async function follow(path, options, { waiting = false } = {}) {
    controller?.abort();
    const mine = new AbortController();
    controller = mine;
    setStreaming(!waiting);
    reply = undefined;
    try {
      await api.stream(path, handle, { ...options, signal: mine.signal });
      return true;
    } catch (error) {
      // Left for a newer stream (a message sent, another conversation): not a failure.
      if (!mine.signal.aborted) sayFailure(statusLine, error, context);
      return false;
    } finally {
      if (controller === mine) setStreaming(false);
    }
  }

  /**
   * While the turn waits (on an approval, or on a connection), reads on in this conversation's own event stream,
   * which any key that may chat here may follow: the turn goes on here whoever decides, wherever, and however
   * long that takes (a quiet stream ends and is opened again). Ends when the turn does, or another stream
   * takes over.
   */
  async function waitWhileParked() {
    while (parkedOn) {
      const id = idInput.value.trim();
      const read = await follow(
        `/conversations/${encodeURIComponent(id)}/events`,
        lastEventId ? { headers: { 'last-event-id': lastEventId } } : {},
        { waiting: true },
      );
      // Failed, or another stream took over: that one reads on.
      if (!read) return;
    }
  }

  function handle({ id, data }) {
    if (id) lastEventId = id;
    switch (data.type) {
      case 'message':
        if (data.role === 'user') {
          const last = transcript.lastElementChild;
          // The same question twice in a row is one message stored and echoed, not two.
          if (last?.classList.contains('entry-user') && last.dataset.content === data.content) return;
          entry('user', 'You', h('p', { class: 'text' }, data.content)).dataset.content = data.content;
        } else {
          const text = reply ?? startReply();
          text.textContent = data.content;
          reply = undefined;
        }
        return;
      case 'delta':
        (reply ?? startReply()).append(data.text);
        scrollToEnd();
        return;
      case 'tool_call':
        reply = undefined;
        entry(
          'tool',
          'Tool call',
          h('p', {}, h('code', {}, data.name)),
          h('pre', { class: 'arguments' }, pretty(data.args)),
        );
        return;
      case 'tool_result':
        entry(
          data.error ? 'error' : 'tool',
          `Result of ${data.name}`,
          h('pre', { class: 'arguments' }, data.error ? `Error: ${data.error}` : pretty(data.output)),
        );
        return;
      case 'file':
        reply = undefined;
        entry('tool', 'Butler sent a file', fileButton(data));
        return;
      case 'confirm_required':
        reply = undefined;
        showConfirm(data);
        return;
      case 'private_link':
        // A Connect link for this key alone: the provider's sign-in opens in a tab of its own. A link that was
        // used or has expired comes without its URL (Butler never stores it).
        entry(
          'tool',
          'For you only',
          h(
            'p',
            { class: 'text' },
            data.text,
            ' ',
            data.url
              ? h('a', { href: data.url, target: '_blank', rel: 'noopener noreferrer' }, data.label)
              : '(This link was used or has expired.)',
          ),
        );
        return;
      case 'connection_required':
        reply = undefined;
        parkedOn = `connection:${data.server}`;
        say(statusLine, `Waiting until ${data.server} is connected; the answer goes on here after that.`);
        return;
      case 'done':
        parkedOn = undefined;
        say(
          statusLine,
          `Reply finished (${formatNumber(data.usage?.promptTokens)} prompt and ${formatNumber(
            data.usage?.completionTokens,
          )} completion tokens).`,
        );
        return;
      case 'error':
        parkedOn = undefined;
        entry('error', 'Error', h('p', { class: 'text' }, data.error));
        say(statusLine, `The turn failed: ${data.error}`, 'error');
        return;
    }
  }

  /** Downloads a file Butler sent with this key, and saves it under its name. */
  function fileButton(file) {
    const button = h(
      'button',
      { type: 'button' },
      `Download ${file.name} (${formatNumber(file.size)} bytes)`,
    );
    button.addEventListener('click', async () => {
      try {
        const blob = await api.blob(file.url.replace(/^\/api\/v1/, ''));
        const link = h('a', { href: URL.createObjectURL(blob), download: file.name });
        link.click();
        setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
      } catch (error) {
        sayFailure(statusLine, error, context);
      }
    });
    return button;
  }

  function startReply() {
    reply = h('p', { class: 'text' });
    entry('assistant', 'Butler', reply);
    say(statusLine, 'Butler is replying…');
    return reply;
  }

  function showConfirm(request) {
    parkedOn = request.approvalId;
    const headingId = `chat-approval-${request.approvalId}`;
    const card = entry(
      'confirm',
      'Approval needed',
      h(
        'p',
        { id: headingId },
        h('code', {}, request.tool),
        ' ',
        h('span', { class: `badge risk-${request.risk}` }, `${request.risk} risk`),
        `: ${request.summary}`,
      ),
      h('pre', { class: 'arguments' }, pretty(request.args)),
      h('p', { class: 'hint' }, 'Expires ', time(request.expiresAt), '.'),
    );
    card.dataset.approvalId = request.approvalId;
    // This key asked: it may confirm a medium-risk call of its own, never a high-risk one (separation of duties).
    if (scopes.approve && request.risk === 'high')
      card.append(
        h(
          'p',
          { class: 'hint cannot-decide' },
          'High risk: an approver other than you decides. Sign in with an approver’s key in another window and use the Approvals tab.',
        ),
      );
    else if (scopes.approve) {
      card.append(
        decisionControls({
          id: `chat-${request.approvalId}`,
          describedBy: headingId,
          onDecide: (decision, reason) => decide(request, decision, reason, card),
        }),
      );
      card.querySelector('button')?.focus();
    } else
      card.append(
        h('p', { class: 'hint cannot-decide' }, 'This key cannot approve: an approver decides elsewhere.'),
      );
    say(statusLine, `Approval needed for ${request.tool} (${request.risk} risk).`);
  }

  async function decide(request, decision, reason, card) {
    try {
      await api.json(`/approvals/${encodeURIComponent(request.approvalId)}/decision`, {
        method: 'POST',
        body: { decision, ...(reason ? { reason } : {}) },
      });
    } catch (error) {
      sayFailure(statusLine, error, context);
      return false;
    }
    card
      .querySelector('.decision')
      ?.replaceWith(
        h('p', { class: 'decided' }, decision === 'approve' ? 'You approved this.' : 'You rejected this.'),
      );
    messageInput.focus();
    return true;
  }

  function startOver(id) {
    controller?.abort();
    transcript.replaceChildren();
    lastEventId = undefined;
    parkedOn = undefined;
    reply = undefined;
    say(statusLine, '');
    sessionStorage.setItem(conversationStorageKey, id);
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const id = idInput.value.trim();
    const text = messageInput.value.trim();
    if (!idPattern.test(id)) {
      say(
        statusLine,
        'The conversation id may have letters, digits, dot, dash and underscore only.',
        'error',
      );
      idInput.focus();
      return;
    }
    if (!text) {
      say(statusLine, 'Write a message first.', 'error');
      messageInput.focus();
      return;
    }
    if (streaming) return;
    sessionStorage.setItem(conversationStorageKey, id);
    messageInput.value = '';
    say(statusLine, 'Sending…');
    const sent = await follow(`/conversations/${encodeURIComponent(id)}/messages`, {
      method: 'POST',
      body: { text },
    });
    // Not accepted: keep what was written.
    if (!sent && !messageInput.value) messageInput.value = text;
    await waitWhileParked();
  });
  messageInput.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter' || event.shiftKey || event.isComposing) return;
    event.preventDefault();
    form.requestSubmit();
  });
  idInput.addEventListener('change', () => startOver(idInput.value.trim()));
  byId('chat-new').addEventListener('click', () => {
    idInput.value = newConversationId();
    startOver(idInput.value);
    messageInput.focus();
  });

  return {
    show() {},
    onLiveEvent(event) {
      // A key that reads live events learns who decided (the turn goes on in this conversation's own stream).
      if (event.type !== 'approval_decided' || event.approvalId !== parkedOn) return;
      const verb = String(event.decision).startsWith('reject') ? 'Rejected' : 'Approved';
      const card = transcript.querySelector(`[data-approval-id="${CSS.escape(event.approvalId)}"]`);
      const outcome = h('p', { class: 'decided' }, `${verb} by ${event.decidedBy}.`);
      const controls = card?.querySelector('.decision, .cannot-decide');
      if (controls) controls.replaceWith(outcome);
      else card?.append(outcome);
    },
    close() {
      controller?.abort();
    },
  };
}
