// Building DOM nodes without innerHTML: every text goes through createTextNode, so no
// value from the server can become markup (the CSP forbids inline script as a second wall).
import {formatDate, zoneName} from './zone.js';

// h('a', {href: '#/x', class: 'btn', onclick: fn}, 'text', otherNode, [more, nodes])
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// Replaces everything inside el with children.
export function mount(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

// A one-line message box: kind is 'error', 'info' or 'ok'.
export function notice(kind, text) {
  return h('p', {class: 'notice ' + kind, role: kind === 'error' ? 'alert' : 'status'}, text);
}

// ISO-8601 → "2026-11-23 18:04:05 UTC" in the user's chosen zone (lib/zone.js), the zone
// named after it; the title keeps the original.  redrawTimes() redraws them all when the
// user picks another zone.
export function when(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (isNaN(d)) return iso;
  return drawTime(h('time', {datetime: iso, class: 'when'}), d);
}

function drawTime(el, d) {
  el.title = `${el.getAttribute('datetime')} (shown in ${zoneName()})`;
  return mount(el, formatDate(d), h('span', {class: 'tz'}, ' ' + zoneName()));
}

export function redrawTimes(root) {
  for (const el of root.querySelectorAll('time.when')) drawTime(el, new Date(el.getAttribute('datetime')));
}

// Marks a page as loaded: main[data-ready=name] (browser tests wait on it) and the title.
export function ready(main, name, title) {
  if (title) document.title = title + ' · Accord';
  main.dataset.ready = name;
}

// "1.2 s", "340 ms", "2 min 5 s"
export function duration(ms) {
  if (ms === undefined || ms === null || isNaN(ms)) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  const m = Math.floor(ms / 60000), s = Math.round((ms % 60000) / 1000);
  return m < 60 ? `${m} min ${s} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

// A stable test hook: h('td', testid('status')) → data-test="status".
export function testid(name, attrs = {}) {
  return Object.assign({'data-test': name}, attrs);
}
