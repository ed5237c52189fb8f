// What the JSON store pages share: their API paths, a store's capacity in words, JSON shown
// and read back in a text box, and the store fetched with the level the user holds on it.
import {api} from '../lib/api.js';
import {h} from '../lib/dom.js';
import {path} from '../lib/admin.js';

// '/api/v1/org/{org}/jsonstore/{store}/…more' with every segment encoded.
export function storeApi(org, store, ...more) {
  return '/api/v1/' + path('org', org, 'jsonstore', store, ...more);
}

// '#/org/{org}/jsonstore/{store}/…more'
export function storeHash(org, store, ...more) {
  return '#/' + path('org', org, 'jsonstore', store, ...more);
}

// The breadcrumbs' first three: Organizations / org / JSON stores.
export function storeCrumbs(org) {
  return [['Organizations', '#/orgs'], [org, '#/' + path('org', org)], ['JSON stores', '#/' + path('org', org, 'jsonstores')]];
}

const bytes = (n) => `${Number(n).toLocaleString('en')} byte${n === 1 ? '' : 's'}`;

// {size, maxSize} (GET …/capacity) → "18 bytes of 40 bytes" or "18 bytes (no limit)".
export function capacityText(c) {
  return c.maxSize >= 0 ? `${bytes(c.size)} of ${bytes(c.maxSize)}` : `${bytes(c.size)} (no limit)`;
}

// A JSON value laid out for reading (two-space indents).
export function pretty(v) {
  return JSON.stringify(v, null, 2);
}

// A monospace text box for JSON.
export function jsonBox(test, value, attrs = {}) {
  const box = h('textarea', Object.assign({rows: 12, class: 'mono', spellcheck: 'false', autocomplete: 'off', 'data-test': test}, attrs));
  box.value = value;
  return box;
}

// The text of a JSON box parsed, or an Error saying where it is not JSON (what names the box).
export function parseJson(text, what) {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${what} is not valid JSON: ${e.message}`);
  }
}

// The store itself (GET …/{store}): its visibility, owner, maximum size and yourAccess.
export function getStore(org, store) {
  return api('GET', storeApi(org, store));
}
