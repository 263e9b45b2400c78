// Conversations: the list, most recent first, and one conversation's summary, messages and compactions.

import { byId, fill, formatNumber, h, say, sayFailure, time } from './dom.js';

const pageSize = 50;

export function createConversationsPanel(context) {
  const { api } = context;
  const panel = byId('panel-conversations');
  const listView = byId('conversations-list-view');
  const rows = byId('conversations-rows');
  const more = byId('conversations-more');
  const statusLine = byId('conversations-status-line');
  const detail = byId('conversation-detail');
  const title = byId('conversation-title');
  const body = byId('conversation-body');
  let cursor = null;
  let loaded = false;
  let generation = 0;
  let reloadTimer;
  /** The button that opened the detail, to return to. */
  let opener;

  async function load({ append = false } = {}) {
    const mine = ++generation;
    const params = new URLSearchParams({ limit: String(pageSize) });
    if (append && cursor) params.set('cursor', cursor);
    try {
      const page = await api.json(`/conversations?${params}`);
      if (mine !== generation) return;
      loaded = true;
      if (!append) rows.replaceChildren();
      rows.append(...page.items.map(row));
      if (rows.children.length === 0)
        rows.append(h('tr', {}, h('td', { colspan: 6, class: 'empty' }, 'No conversations yet.')));
      cursor = page.nextCursor;
      more.hidden = !cursor;
    } catch (error) {
      if (mine === generation) sayFailure(statusLine, error, context);
    }
  }

  function row(item) {
    const { address } = item;
    const where = `${address.workspace} / ${address.channel}${address.thread === 'main' ? '' : ` / ${address.thread}`}`;
    const button = h(
      'button',
      { type: 'button', class: 'link', onclick: () => void openDetail(item.key, button) },
      where,
    );
    return h(
      'tr',
      { dataset: { key: item.key } },
      h('th', { scope: 'row' }, button),
      h('td', {}, address.platform),
      h('td', {}, item.profile ?? 'default'),
      h('td', {}, time(item.lastActivity)),
      h('td', { class: 'number' }, formatNumber(item.promptTokens)),
      h('td', { class: 'number' }, formatNumber(item.completionTokens)),
    );
  }

  async function openDetail(key, button) {
    opener = button;
    say(statusLine, 'Loading the conversation…');
    try {
      const conversation = await api.json(`/conversations/${encodeURIComponent(key)}`);
      say(statusLine, '');
      listView.hidden = true;
      detail.hidden = false;
      title.textContent = key;
      fill(body, ...detailContent(conversation));
      title.focus();
    } catch (error) {
      sayFailure(statusLine, error, context);
    }
  }

  function closeDetail() {
    detail.hidden = true;
    listView.hidden = false;
    body.replaceChildren();
    if (opener?.isConnected) opener.focus();
  }

  function detailContent(conversation) {
    const messages = conversation.messages ?? [];
    const compactions = conversation.compactions ?? [];
    return [
      h(
        'p',
        { class: 'conversation-profile' },
        'Channel profile: ',
        conversation.profile ? h('strong', {}, conversation.profile) : 'none (the defaults)',
      ),
      h('h4', {}, 'Summary'),
      conversation.summary
        ? h('p', { class: 'conversation-summary' }, conversation.summary)
        : h('p', { class: 'empty' }, 'No summary yet: nothing has been compacted.'),
      h('h4', {}, `Messages (${messages.length})`),
      messages.length === 0
        ? h('p', { class: 'empty' }, 'No messages.')
        : h(
            'ol',
            { class: 'messages' },
            messages.map((message) =>
              h(
                'li',
                { class: `message role-${message.role}${message.compacted ? ' compacted' : ''}` },
                h(
                  'p',
                  { class: 'meta' },
                  h('strong', {}, message.author ?? message.role),
                  message.author ? ` (${message.role}) · ` : ' · ',
                  time(message.createdAt),
                  message.compacted ? ' · compacted into the summary' : '',
                ),
                message.content ? h('p', { class: 'content' }, message.content) : null,
                ...(message.toolCalls ?? []).map((call) =>
                  h(
                    'p',
                    { class: 'tool-call' },
                    'Called ',
                    h('code', {}, call.name),
                    ' ',
                    h('code', {}, call.arguments),
                  ),
                ),
              ),
            ),
          ),
      h('h4', {}, 'Compactions'),
      compactions.length === 0
        ? h('p', { class: 'empty' }, 'None.')
        : h(
            'table',
            {},
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                ['When', 'Model', 'Tokens before', 'Tokens after', 'Messages folded'].map((label) =>
                  h('th', { scope: 'col' }, label),
                ),
              ),
            ),
            h(
              'tbody',
              {},
              compactions.map((compaction) =>
                h(
                  'tr',
                  {},
                  h('td', {}, time(compaction.at)),
                  h('td', {}, compaction.model),
                  h('td', { class: 'number' }, formatNumber(compaction.tokensBefore)),
                  h('td', { class: 'number' }, formatNumber(compaction.tokensAfter)),
                  h('td', { class: 'number' }, formatNumber(compaction.messagesFolded)),
                ),
              ),
            ),
          ),
    ];
  }

  byId('conversation-back').addEventListener('click', closeDetail);
  detail.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') closeDetail();
  });
  more.addEventListener('click', () => void load({ append: true }));

  function refreshList() {
    if (!loaded || panel.hidden || !detail.hidden) return;
    clearTimeout(reloadTimer);
    reloadTimer = setTimeout(() => void load(), 300);
  }

  return {
    show() {
      if (!loaded) void load();
      else refreshList();
    },
    onReconnect: refreshList,
    onLiveEvent(event) {
      if (event.type === 'turn_finished' || event.type === 'compaction') refreshList();
    },
    close() {
      clearTimeout(reloadTimer);
    },
  };
}
