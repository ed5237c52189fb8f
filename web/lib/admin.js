// Building blocks of the administration pages (organizations, projects, repositories,
// secrets, API keys): labelled fields, error boxes next to forms, breadcrumbs, tables,
// copy buttons, in-page confirmations and the data-ready mark the browser tests wait on.
import {qs} from './api.js';
import {h, mount, notice, ready} from './dom.js';

// The pages' own rules, next to style.css (a linked file: the CSP allows no inline style).
if (!document.getElementById('admin-css'))
  document.head.append(h('link', {id: 'admin-css', rel: 'stylesheet', href: new URL('./admin.css', import.meta.url).href}));

// URL path segments, each encoded: path('org', 'a b', 'secret') → 'org/a%20b/secret'.
export const path = (...parts) => parts.map(encodeURIComponent).join('/');

let nextId = 0;

// A unique id for pairing a label with its input.
export function uid(prefix) {
  return `${prefix}-${++nextId}`;
}

// A label above an input (or select/textarea); the input gets an id when it has none.
// hint: optional help text, tied to the input by aria-describedby.
export function field(label, input, hint) {
  if (!input.id) input.id = uid('f');
  const parts = [h('label', {for: input.id}, label), input];
  if (hint) {
    const hid = input.id + '-hint';
    input.setAttribute('aria-describedby', hid);
    parts.push(h('p', {class: 'hint', id: hid}, hint));
  }
  return h('div', {class: 'field'}, parts);
}

// A <select> of [value, text] pairs (or plain strings).
export function select(attrs, options, selected) {
  return h('select', attrs, options.map((o) => {
    const [value, text] = Array.isArray(o) ? o : [o, o];
    return h('option', {value, selected: value === selected}, text);
  }));
}

// The place where a form shows what went wrong (the server's message, as it said it).
export function errorBox(test) {
  const el = h('div', {'data-test': test || 'form-error', 'aria-live': 'assertive'});
  return {
    el,
    show(e) {
      mount(el, notice('error', (e && e.message) || String(e)));
    },
    ok(text) {
      mount(el, notice('ok', text));
    },
    clear() {
      mount(el);
    },
  };
}

// Runs fn while button is disabled (no double submits); errors go to box.
export async function busy(button, box, fn) {
  button.disabled = true;
  if (box) box.clear();
  try {
    return await fn();
  } catch (e) {
    if (box) box.show(e);
    else throw e;
  } finally {
    button.disabled = false;
  }
}

// Breadcrumbs: crumbs(['Organizations', '#/orgs'], ['myOrg', '#/org/myOrg'], ['here']).
export function crumbs(...items) {
  const list = h('ol', {class: 'crumbs'});
  items.forEach(([text, href], i) => {
    const last = i === items.length - 1;
    list.append(h('li', {}, last || !href ? h('span', {'aria-current': last ? 'page' : null}, text) : h('a', {href}, text),
      last ? null : ' / '));
  });
  return h('nav', {'aria-label': 'Breadcrumb'}, list);
}

// A table inside a horizontally scrolling box; on a phone (admin.css) each row becomes a
// stacked card whose cells are labelled by their column's header (data-label).  rows:
// arrays of cells (nodes or text); empty: the text shown instead of no rows.
export function table(test, headers, rows, empty) {
  if (!rows.length) return h('p', {class: 'hint', 'data-test': test + '-empty'}, empty || 'Nothing here yet.');
  return h('div', {class: 'table-wrap'},
    h('table', {class: 'cards', 'data-test': test},
      h('thead', {}, h('tr', {}, headers.map((t) => h('th', {scope: 'col'}, t)))),
      h('tbody', {}, rows.map((r) => h('tr', {}, r.map((c, i) => h('td', {'data-label': headers[i] || null}, c)))))));
}

// Key/value lines (a <dl>) for a record's details, leaving out empty values.
export function details(test, pairs) {
  const dl = h('dl', {class: 'details', 'data-test': test});
  for (const [k, v] of pairs) {
    if (v === undefined || v === null || v === '') continue;
    dl.append(h('dt', {}, k), h('dd', {}, v));
  }
  return dl;
}

// A button copying the text of box (a text box) to the clipboard, saying whether that
// worked.  Without the clipboard API (plain http from another host) the text is selected
// instead, for Ctrl+C.
export function copyButton(box, test, what) {
  const status = h('span', {class: 'hint', role: 'status'});
  const btn = h('button', {type: 'button', class: 'secondary', 'data-test': test}, 'Copy');
  btn.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(box.value);
      status.textContent = ` Copied the ${what} to the clipboard.`;
    } catch (e) {
      box.focus();
      box.select();
      status.textContent = ' The browser does not allow copying here: the text is selected, press Ctrl+C.';
    }
  });
  return h('span', {}, btn, status);
}

// A read-only text box holding a value to copy (public key, new API key), with its label
// and a copy button.
export function copyable(label, value, test) {
  const box = h('textarea', {readonly: true, rows: value.length > 120 ? 6 : 2, class: 'mono', 'data-test': test, spellcheck: 'false'});
  box.value = value;
  box.addEventListener('focus', () => box.select());
  return h('div', {}, field(label, box), copyButton(box, test + '-copy', label.toLowerCase()));
}

// An in-page confirmation (keyboard friendly, unlike window.confirm's modal): replaces
// the contents of holder with the question and two buttons; focus goes to "Cancel".
export function confirm(holder, question, yesText, onYes) {
  const previous = [...holder.childNodes];
  const box = errorBox('confirm-error');
  const restore = () => mount(holder, previous);
  const no = h('button', {type: 'button', class: 'secondary', 'data-test': 'confirm-no', onclick: restore}, 'Cancel');
  const yes = h('button', {type: 'button', class: 'danger', 'data-test': 'confirm-yes'}, yesText);
  yes.addEventListener('click', () => busy(yes, box, onYes));
  const panel = h('div', {class: 'panel', role: 'alertdialog', 'aria-label': question, 'data-test': 'confirm'},
    h('p', {}, question), h('div', {class: 'row'}, yes, no), box.el);
  panel.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape') restore();
  });
  mount(holder, panel);
  no.focus();
}

// A panel with one danger button that asks before it acts (onYes: async, may throw).
export function deletePanel(test, label, question, onYes) {
  const holder = h('div', {});
  const btn = h('button', {type: 'button', class: 'danger', 'data-test': test}, label);
  btn.addEventListener('click', () => confirm(holder, question, 'Delete', onYes));
  mount(holder, btn);
  return h('div', {class: 'panel'}, h('h2', {}, 'Delete'), holder);
}

// Runs a page's loader, then marks the page loaded (main[data-ready=page], the title).
// A loader that fails leaves what it drew (the breadcrumbs) with the server's message
// after it, and data-ready="error" as on the pages that could not be shown at all.
export async function loadPage(main, page, title, fn) {
  try {
    await fn();
  } catch (e) {
    if (e && e.status === 401) return; // api.js went to the login page
    main.append(h('div', {'data-test': 'page-error'}, notice('error', (e && e.message) || String(e))));
    ready(main, 'error', title);
    return;
  }
  ready(main, page, title);
}


// A search form that puts its value into the page's hash as ?filter= (so the back button
// and reloads keep it).
export function filterForm(base, filter, test, label) {
  const input = h('input', {type: 'search', name: 'filter', value: filter, 'data-test': test});
  const form = h('form', {class: 'row', role: 'search'}, field(label, input), h('button', {type: 'submit'}, 'Filter'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    location.hash = base + qs({filter: input.value.trim()});
  });
  return form;
}

// Previous/next links for a list read with limit+1 rows (more: there was an extra row).
export function pager(base, filter, offset, limit, more, test) {
  const link = (o, text, t) => h('a', {href: base + qs({filter, offset: o || null}), class: 'btn secondary', 'data-test': t}, text);
  return h('div', {class: 'row'},
    offset > 0 ? link(Math.max(0, offset - limit), 'Previous', test + '-prev') : null,
    more ? link(offset + limit, 'Next', test + '-next') : null);
}
