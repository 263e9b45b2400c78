// Butler's admin console: sign in with an API key, then approvals, audit log, conversations, usage, scheduled
// tasks and a chat box, all over the HTTP API, following the live events stream.

import { ApiFailure, createApi } from './api.js';
import { createApprovalsPanel } from './approvals.js';
import { createAuditPanel } from './audit.js';
import { createChatPanel } from './chat.js';
import { createConnectionsPanel } from './connections.js';
import { createConversationsPanel } from './conversations.js';
import { byId, say } from './dom.js';
import { followLiveEvents } from './live.js';
import { requestInAddress } from './request.js';
import { createSchedulesPanel } from './schedules.js';
import { setUpTenantPicker } from './tenants.js';
import { createUsagePanel } from './usage.js';

const storageKey = 'butler.console.key';

let session;

/** Checks the key with the API and opens the console, or says plainly why not. */
async function signIn(key) {
  const error = byId('sign-in-error');
  const submit = byId('sign-in-form').querySelector('button[type="submit"]');
  say(error, '');
  const api = createApi(key);
  let scopes;
  submit.disabled = true;
  try {
    scopes = await api.scopes();
  } catch (failure) {
    submit.disabled = false;
    say(error, failure instanceof ApiFailure ? failure.describe() : String(failure), 'error');
    sessionStorage.removeItem(storageKey);
    byId('api-key').focus();
    return;
  }
  submit.disabled = false;
  if (!scopes.read && !scopes.chat) {
    say(
      error,
      'This key has neither the read nor the chat scope: there is nothing the console can show.',
      'error',
    );
    return;
  }
  sessionStorage.setItem(storageKey, key);
  open(api, scopes);
}

function open(api, scopes) {
  if (session) return;
  byId('api-key').value = '';
  byId('sign-in').hidden = true;
  byId('workspace').hidden = false;
  byId('session').hidden = false;
  const granted = ['read', 'chat', 'approve'].filter((scope) => scopes[scope]);
  // The key's name is who its decisions and messages are taken as.
  const limited = scopes.tenants ? ` · tenants: ${scopes.tenants.join(', ')}` : '';
  byId('identity').textContent = `Signed in as ${scopes.name} · scopes: ${granted.join(', ')}${limited}`;
  // What serves every tenant (the audit log, tasks, live events) is not for a key limited to some.
  const everyTenant = !scopes.tenants;

  const context = { api, scopes, signOut: () => signOut('Your key was refused. Sign in again.') };
  const panels = {
    approvals: scopes.read ? createApprovalsPanel(context) : undefined,
    audit: scopes.read && everyTenant ? createAuditPanel(context) : undefined,
    conversations: scopes.read ? createConversationsPanel(context) : undefined,
    usage: scopes.read ? createUsagePanel(context) : undefined,
    // Every key has tasks: a read key sees everyone's, another its own.
    schedules: everyTenant ? createSchedulesPanel(context) : undefined,
    // Only where a server wants OAuth (the API answers /connections then).
    connections: scopes.connections ? createConnectionsPanel(context) : undefined,
    chat: scopes.chat ? createChatPanel(context) : undefined,
  };
  const tabs = setUpTabs(panels);
  // The sign-in form just went away: put the keyboard on the tabs, not on a hidden button.
  if (
    !document.activeElement ||
    document.activeElement === document.body ||
    byId('sign-in').contains(document.activeElement)
  )
    document.querySelector('[role="tab"][aria-selected="true"]')?.focus();

  const stopLive =
    scopes.read && everyTenant
      ? followLiveEvents(api, {
          onEvent: (event) => {
            for (const panel of Object.values(panels)) panel?.onLiveEvent?.(event);
          },
          onState: (state, detail) => showLiveState(state, detail, panels),
        })
      : undefined;
  if (!scopes.read || !everyTenant) showLiveState('unavailable');
  session = { stopLive, panels, tabs };
  showRequestInAddress();
  void setUpTenantPicker(context, (tenant) => {
    api.pickTenant(tenant);
    for (const panel of Object.values(panels)) panel?.onReconnect?.();
  });
}

/** A card's console link names a request (`#approval=<id>`): the approvals tab opens on it. */
function showRequestInAddress() {
  const target = requestInAddress();
  const approvals = session?.panels.approvals;
  if (!target || !approvals) return;
  session.tabs.select('approvals');
  approvals.showRequest(target);
}

function showLiveState(state, detail, panels = {}) {
  const status = byId('live-status');
  status.dataset.state = state;
  if (state === 'live') {
    status.textContent = 'Live events: connected';
    // Whatever happened while the stream was down is read again.
    for (const panel of Object.values(panels)) panel?.onReconnect?.();
  } else if (state === 'connecting') status.textContent = 'Live events: connecting…';
  else if (state === 'waiting')
    status.textContent = `Live events: disconnected, retrying in ${Math.ceil(detail / 1000)} s`;
  else if (state === 'refused') status.textContent = `Live events: ${detail.describe()}`;
  else status.textContent = 'Live events: not available for this key';
}

function signOut(message = '') {
  session?.stopLive?.();
  for (const panel of Object.values(session?.panels ?? {})) panel?.close?.();
  session = undefined;
  sessionStorage.removeItem(storageKey);
  // A fresh page: no panel state, listener or stream outlives the key.
  if (message) sessionStorage.setItem(`${storageKey}.message`, message);
  location.reload();
}

/** Tabs after the WAI-ARIA pattern: arrow keys, Home and End move between them; one is in the tab order. */
function setUpTabs(panels) {
  const list = byId('tabs');
  const tabs = [...list.querySelectorAll('[role="tab"]')].filter((tab) => {
    const name = tab.id.replace('tab-', '');
    tab.hidden = !panels[name];
    return Boolean(panels[name]);
  });
  function select(tab, focus = false) {
    for (const other of tabs) {
      const selected = other === tab;
      other.setAttribute('aria-selected', String(selected));
      other.tabIndex = selected ? 0 : -1;
      byId(other.getAttribute('aria-controls')).hidden = !selected;
    }
    if (focus) tab.focus();
    sessionStorage.setItem(`${storageKey}.tab`, tab.id);
    panels[tab.id.replace('tab-', '')]?.show?.();
  }
  for (const tab of tabs) tab.addEventListener('click', () => select(tab));
  list.addEventListener('keydown', (event) => {
    const index = tabs.indexOf(document.activeElement);
    if (index === -1) return;
    const next = {
      ArrowRight: tabs[(index + 1) % tabs.length],
      ArrowLeft: tabs[(index - 1 + tabs.length) % tabs.length],
      Home: tabs[0],
      End: tabs.at(-1),
    }[event.key];
    if (!next) return;
    event.preventDefault();
    select(next, true);
  });
  const remembered = tabs.find((tab) => tab.id === sessionStorage.getItem(`${storageKey}.tab`));
  select(remembered ?? tabs[0]);
  return { select: (name) => select(byId(`tab-${name}`)) };
}

function start() {
  byId('sign-in-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const key = byId('api-key').value.trim();
    if (!key) {
      say(byId('sign-in-error'), 'Enter an API key.', 'error');
      byId('api-key').focus();
      return;
    }
    void signIn(key);
  });
  byId('sign-out').addEventListener('click', () => signOut());
  window.addEventListener('hashchange', showRequestInAddress);
  const message = sessionStorage.getItem(`${storageKey}.message`);
  if (message) {
    sessionStorage.removeItem(`${storageKey}.message`);
    say(byId('sign-in-error'), message, 'error');
  }
  const key = sessionStorage.getItem(storageKey);
  if (key) void signIn(key);
  else byId('api-key').focus();
}

start();
