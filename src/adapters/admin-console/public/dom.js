// Small DOM helpers. Text always goes in as text nodes, never as HTML: what Butler, its tools and its users
// wrote is shown, not run.

/**
 * Creates an element: `h('button', { type: 'button', onclick }, 'Approve')`. Attributes named `on…` are
 * listeners; `false`, `null` and `undefined` attributes are left out; children may be nested arrays.
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith('on') && typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (name === 'dataset') Object.assign(element.dataset, value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

function append(parent, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.append(child instanceof Node ? child : String(child));
  }
}

/** Replaces an element's content. */
export function fill(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

export const byId = (id) => {
  const element = document.getElementById(id);
  if (!element) throw new Error(`The page has no #${id}`);
  return element;
};

const numberFormat = new Intl.NumberFormat();
export const formatNumber = (value) => numberFormat.format(value ?? 0);

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
export function formatDate(value) {
  if (!value) return '—';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? String(value) : dateFormat.format(date);
}

export function formatCost(usd) {
  if (usd === null || usd === undefined) return '—';
  if (usd > 0 && usd < 0.01) return '<$0.01';
  return `$${usd.toFixed(2)}`;
}

/** A `<time>` element: readable text, machine-readable datetime. */
export const time = (value) => h('time', { datetime: value ?? undefined }, formatDate(value));

/** JSON for people: pretty-printed, or the text itself when it is a string. */
export function pretty(value) {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

/** Says `text` in a live region (role="status" or "alert"): screen readers announce it, and it stays visible. */
export function say(region, text, tone = 'info') {
  region.textContent = text;
  region.dataset.tone = tone;
}

/** A `datetime-local` input's value as an ISO instant (the API wants UTC), or undefined when empty. */
export function isoFromLocal(value) {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/**
 * Shows a failed request in a panel's status line. A refused key (401) ends the session instead: every
 * other request would fail the same way.
 */
export function sayFailure(region, error, context) {
  if (error?.name === 'AbortError') return;
  if (error?.status === 401) return context.signOut();
  const text = typeof error?.describe === 'function' ? error.describe() : `Something went wrong: ${error}`;
  say(region, text, 'error');
}
