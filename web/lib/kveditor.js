// A small editor of process arguments: rows of name, value and type (text, number,
// true/false, JSON), rows added and removed with buttons.  value() returns the arguments
// as an object (dotted names nest: "a.b" → {a: {b: …}}) or throws an Error naming the row;
// pairs() returns the rows as typed.  declare(list) puts the arguments a definition declares
// ([{name, type, default}], GET …/repository/{repo}/definition) first as rows of their own:
// the name fixed, the type and value preset; such a row is sent only once its value differs
// from the declared one (left alone, the definition's own value applies).
import {h} from './dom.js';
import {field, select, uid} from './admin.js';

const TYPES = [['text', 'Text'], ['number', 'Number'], ['boolean', 'true/false'], ['json', 'JSON']];

export function kvEditor(test) {
  const rows = h('div', {'data-test': test + '-rows'});
  const add = h('button', {type: 'button', class: 'secondary', 'data-test': test + '-add'}, 'Add argument');
  add.addEventListener('click', () => addRow(rows, add).querySelector('input').focus());
  const el = h('fieldset', {'data-test': test},
    h('legend', {}, 'Arguments'),
    h('p', {class: 'hint'}, 'Names with dots nest: "deploy.region" becomes {"deploy": {"region": …}}.'),
    rows, add);
  return {el, value: () => collect(rows), pairs: () => pairs(rows), declare: (list) => declare(rows, add, list)};
}

const DECLARED_TYPE = {string: 'text', number: 'number', boolean: 'boolean', object: 'json', array: 'json', expression: 'text'};

function declare(rows, add, list) {
  for (const row of rows.querySelectorAll('[data-declared]')) row.remove();
  const first = rows.firstChild;
  for (const a of list) {
    const row = addRow(rows, add);
    const [name, value, type] = ['arg-name', 'arg-value', 'arg-type'].map((t) => row.querySelector(`[data-test="${t}"]`));
    row.dataset.declared = a.name;
    name.value = a.name;
    name.readOnly = true;
    type.value = DECLARED_TYPE[a.type] || 'text';
    value.value = a.default === undefined ? '' : typeof a.default === 'string' ? a.default : JSON.stringify(a.default);
    value.dataset.declared = value.value;
    if (a.type === 'expression') value.placeholder = 'computed by the definition';
    row.querySelector('[data-test="arg-remove"]').remove();
    rows.insertBefore(row, first);
  }
}

function addRow(rows, add) {
  const n = uid('arg');
  const name = h('input', {type: 'text', id: n + '-name', 'data-test': 'arg-name', autocomplete: 'off', spellcheck: 'false'});
  const value = h('input', {type: 'text', id: n + '-value', 'data-test': 'arg-value', autocomplete: 'off', spellcheck: 'false'});
  const type = select({id: n + '-type', 'data-test': 'arg-type'}, TYPES, 'text');
  const row = h('div', {class: 'row kv-row', 'data-test': 'arg-row'},
    field('Name', name), field('Value', value), field('Type', type));
  const remove = h('button', {type: 'button', class: 'secondary', 'data-test': 'arg-remove', 'aria-label': 'Remove this argument'}, 'Remove');
  remove.addEventListener('click', () => {
    const next = row.nextElementSibling || row.previousElementSibling;
    row.remove();
    (next ? next.querySelector('input') : add).focus();
  });
  row.append(remove);
  rows.append(row);
  return row;
}

function typed(name, text, type) {
  switch (type) {
  case 'number': {
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n)) throw new Error(`Argument '${name}': "${text}" is not a number`);
    return n;
  }
  case 'boolean':
    if (!/^(true|false)$/i.test(text.trim())) throw new Error(`Argument '${name}': "${text}" is neither true nor false`);
    return text.trim().toLowerCase() === 'true';
  case 'json':
    try {
      return JSON.parse(text);
    } catch (e) {
      throw new Error(`Argument '${name}': not valid JSON (${e.message})`);
    }
  default:
    return text;
  }
}

// The rows as typed: [{name, text, type}], blank rows and declared ones left as declared
// left out.
function pairs(rows) {
  return [...rows.querySelectorAll('[data-test="arg-row"]')].filter((row) => !row.dataset.declared ||
    row.querySelector('[data-test="arg-value"]').value !== row.querySelector('[data-test="arg-value"]').dataset.declared).map((row) => ({
    name: row.querySelector('[data-test="arg-name"]').value.trim(),
    text: row.querySelector('[data-test="arg-value"]').value,
    type: row.querySelector('[data-test="arg-type"]').value,
  })).filter((p) => p.name || p.text);
}

function collect(rows) {
  const out = {};
  for (const {name, text, type} of pairs(rows)) {
    if (!name) throw new Error(`An argument with the value "${text}" has no name`);
    const keys = name.split('.');
    if (keys.some((k) => !k)) throw new Error(`Argument '${name}': empty part in the name`);
    let at = out;
    for (const k of keys.slice(0, -1)) {
      if (typeof at[k] !== 'object' || at[k] === null || Array.isArray(at[k])) at[k] = {};
      at = at[k];
    }
    at[keys[keys.length - 1]] = typed(name, text, type);
  }
  return out;
}
