// A process form (GET /api/v1/process/{id}/form/{name}) as an HTML form, shared by the form
// page and the wizard.  Every field type (string, int, decimal, boolean, date, dateTime,
// file), cardinality (ONE_AND_ONLY_ONE, ONE_OR_NONE, AT_LEAST_ONE: repeatable, ANY:
// repeatable), allowed values as radios / a select / checkboxes, pattern, min/max,
// placeholder, readonly, inputType.  The browser's own validation is off (novalidate): the
// server checks every value and its messages are shown next to their fields
// (aria-describedby), so the rules live in one place.
import {api, enc} from './api.js';
import {h, mount, notice} from './dom.js';

const MULTI = new Set(['AT_LEAST_ONE', 'ANY']);
const REQUIRED = new Set(['ONE_AND_ONLY_ONE', 'AT_LEAST_ONE']);
const INPUT_TYPES = new Set(['text', 'password', 'email', 'url', 'tel', 'search', 'color']);
const RADIO_MAX = 5; // more choices than this: a select

// A field name as an id: letters, digits, '-' and '_' kept, the rest as _xx.
function idOf(prefix, name) {
  return prefix + '-' + name.replace(/[^A-Za-z0-9_-]/g, (c) => '_' + c.charCodeAt(0).toString(16));
}

// allowedValue as a list of choices, or null (an object's keys are the choices).
function choicesOf(f) {
  const a = f.allowedValue;
  if (a === null || a === undefined || a === '') return null;
  if (Array.isArray(a)) return a.length ? a : null;
  if (typeof a === 'object') return Object.keys(a);
  return [a];
}

function asList(v) {
  if (v === null || v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

const pad = (n) => String(n).padStart(2, '0');

// The server's value as the text of an input of the field's type.
function inputValue(type, v) {
  if (v === null || v === undefined) return '';
  if (type === 'date') return String(v).slice(0, 10);
  if (type === 'dateTime') {
    const d = new Date(v);
    if (isNaN(d)) return '';
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }
  return String(v);
}

// An input's text as the value sent: dateTime as ISO-8601 with the browser's offset.
function sendValue(type, text) {
  if (type === 'dateTime' && text) {
    const d = new Date(text);
    return isNaN(d) ? text : d.toISOString();
  }
  return text;
}

function inputAttrs(f, id) {
  const o = f.options || {};
  const a = {id, name: f.name};
  switch (f.type) {
  case 'int': Object.assign(a, {type: 'number', step: '1', inputmode: 'numeric'}); break;
  case 'decimal': Object.assign(a, {type: 'number', step: 'any', inputmode: 'decimal'}); break;
  case 'date': a.type = 'date'; break;
  case 'dateTime': Object.assign(a, {type: 'datetime-local', step: '1'}); break;
  default: a.type = INPUT_TYPES.has(o.inputType) ? o.inputType : 'text';
  }
  if (typeof o.pattern === 'string' && f.type === 'string') a.pattern = o.pattern;
  if (typeof o.min === 'number') a.min = o.min;
  if (typeof o.max === 'number') a.max = o.max;
  if (o.placeholder !== undefined && o.placeholder !== null) a.placeholder = String(o.placeholder);
  if (o.readonly === true) Object.assign(a, {readonly: true, 'aria-readonly': 'true'});
  if (REQUIRED.has(f.cardinality)) a['aria-required'] = 'true';
  return a;
}

// What the user is told about the rules of a field.
function hintOf(f) {
  const o = f.options || {}, parts = [];
  if (f.cardinality === 'ONE_OR_NONE' || f.cardinality === 'ANY') parts.push('optional');
  if (MULTI.has(f.cardinality)) parts.push(f.cardinality === 'ANY' ? 'any number of values' : 'one or more values');
  if (typeof o.min === 'number' && typeof o.max === 'number') parts.push(`from ${o.min} to ${o.max}`);
  else if (typeof o.min === 'number') parts.push(`at least ${o.min}`);
  else if (typeof o.max === 'number') parts.push(`at most ${o.max}`);
  if (typeof o.pattern === 'string') parts.push(`pattern ${o.pattern}`);
  if (o.readonly === true) parts.push('read-only');
  return parts.join(' · ');
}

// Each builder returns {el, get(), controls()}: get() → undefined (leave out), a value, a
// list, or {files: [File]}; controls() → the focusable inputs.

function textField(f, id) {
  const a = inputAttrs(f, id);
  const multi = MULTI.has(f.cardinality);
  if (!multi) {
    const input = h('input', Object.assign(a, {value: inputValue(f.type, f.value)}));
    return {el: input, controls: () => [input],
      get: () => (input.value === '' ? undefined : sendValue(f.type, input.value))};
  }
  const list = h('div', {class: 'repeat', id: id + '-list'});
  const readonly = (f.options || {}).readonly === true;
  const add = h('button', {type: 'button', class: 'secondary small', id: id + '-add', hidden: readonly,
    onclick: () => { const i = addRow(''); i.focus(); }}, `Add ${f.label || f.name}`);
  function renumber() {
    [...list.children].forEach((row, i) => {
      const input = row.querySelector('input');
      input.id = i === 0 ? id : `${id}-${i + 1}`;
      if (i > 0) input.setAttribute('aria-label', `${f.label || f.name} (${i + 1})`);
      else input.removeAttribute('aria-label');
      row.querySelector('button').setAttribute('aria-label', `Remove ${f.label || f.name} (${i + 1})`);
    });
  }
  function addRow(v) {
    const input = h('input', Object.assign({}, a, {value: inputValue(f.type, v)}));
    const row = h('div', {class: 'repeat-row'}, input,
      h('button', {type: 'button', class: 'secondary small', hidden: readonly,
        onclick: () => { row.remove(); if (!list.children.length) addRow(''); renumber(); add.focus(); }}, 'Remove'));
    list.append(row);
    renumber();
    return input;
  }
  const start = asList(f.value);
  (start.length ? start : ['']).forEach(addRow);
  const controls = () => [...list.querySelectorAll('input')];
  return {el: h('div', {}, list, add), controls,
    get: () => controls().map((i) => i.value).filter((v) => v !== '').map((v) => sendValue(f.type, v))};
}

function choiceField(f, id, choices) {
  const readonly = (f.options || {}).readonly === true;
  const current = asList(f.value).map(String);
  if (MULTI.has(f.cardinality)) {
    const boxes = choices.map((c, i) => h('input', {type: 'checkbox', id: `${id}-${i}`, name: f.name, value: String(c),
      checked: current.includes(String(c)), disabled: readonly}));
    return {el: h('div', {class: 'choices'}, boxes.map((b, i) => h('label', {class: 'choice', for: b.id}, b, ' ', String(choices[i])))),
      controls: () => boxes, get: () => choices.filter((c, i) => boxes[i].checked)};
  }
  if (choices.length > RADIO_MAX || (f.options || {}).search === true) {
    const sel = h('select', {id, name: f.name, disabled: readonly, 'aria-required': REQUIRED.has(f.cardinality) ? 'true' : null},
      h('option', {value: ''}, f.cardinality === 'ONE_OR_NONE' ? '(none)' : 'Choose…'),
      choices.map((c, i) => h('option', {value: String(i), selected: current[0] === String(c)}, String(c))));
    return {el: sel, controls: () => [sel], get: () => (sel.value === '' ? undefined : choices[+sel.value])};
  }
  const opts = choices.map((c, i) => ({value: c, id: `${id}-${i}`, label: String(c), checked: current[0] === String(c)}));
  if (f.cardinality === 'ONE_OR_NONE')
    opts.unshift({value: undefined, id: `${id}-none`, label: '(none)', checked: !current.length});
  const radios = opts.map((o) => h('input', {type: 'radio', id: o.id, name: f.name, checked: o.checked, disabled: readonly}));
  return {el: h('div', {class: 'choices'}, radios.map((r, i) => h('label', {class: 'choice', for: r.id}, r, ' ', opts[i].label))),
    controls: () => radios, get: () => { const i = radios.findIndex((r) => r.checked); return i < 0 ? undefined : opts[i].value; }};
}

function booleanField(f, id) {
  const readonly = (f.options || {}).readonly === true;
  const box = h('input', {type: 'checkbox', id, name: f.name, checked: f.value === true || f.value === 'true', disabled: readonly});
  return {el: box, controls: () => [box], get: () => box.checked};
}

function fileField(f, id) {
  const input = h('input', {type: 'file', id, name: f.name, multiple: MULTI.has(f.cardinality),
    disabled: (f.options || {}).readonly === true});
  return {el: input, controls: () => [input], get: () => (input.files.length ? {files: [...input.files]} : undefined)};
}

function buildField(f, prefix) {
  const id = idOf(prefix, f.name);
  const choices = f.type === 'boolean' || f.type === 'file' ? null : choicesOf(f);
  const w = f.type === 'boolean' ? booleanField(f, id)
    : f.type === 'file' ? fileField(f, id)
    : choices ? choiceField(f, id, choices)
    : textField(f, id);
  const label = f.label || f.name;
  const hint = hintOf(f);
  const hintEl = hint ? h('p', {class: 'hint', id: id + '-hint'}, hint) : null;
  const errEl = h('p', {class: 'field-error', id: id + '-error', 'data-test': 'field-error', hidden: true});
  const group = choices && w.el.tagName !== 'SELECT'; // radios or checkboxes: a fieldset
  const mark = REQUIRED.has(f.cardinality) && (f.options || {}).readonly !== true
    ? h('span', {class: 'required', 'aria-hidden': 'true'}, ' *') : null;
  const wrap = group
    ? h('fieldset', {class: 'field', 'data-field': f.name, 'data-type': f.type},
      h('legend', {}, label, mark), hintEl, w.el, errEl)
    : f.type === 'boolean'
      ? h('div', {class: 'field field-boolean', 'data-field': f.name, 'data-type': f.type},
        h('label', {for: id, class: 'choice'}, w.el, ' ', label), hintEl, errEl)
      : h('div', {class: 'field', 'data-field': f.name, 'data-type': f.type},
        h('label', {for: id}, label, mark), hintEl, w.el, errEl);
  function describe(withError) {
    const ids = [hintEl && hintEl.id, withError && errEl.id].filter(Boolean).join(' ');
    for (const c of w.controls()) {
      if (ids) c.setAttribute('aria-describedby', ids);
      else c.removeAttribute('aria-describedby');
      if (withError) c.setAttribute('aria-invalid', 'true');
      else c.removeAttribute('aria-invalid');
    }
  }
  describe(false);
  return {
    def: f, el: wrap, get: w.get, controls: w.controls,
    readonly: (f.options || {}).readonly === true,
    setError(msg) {
      errEl.textContent = msg || '';
      errEl.hidden = !msg;
      wrap.classList.toggle('invalid', !!msg);
      describe(!!msg);
    },
  };
}

// Renders form `name` of process pid into container.  onSubmitted(def) runs after a valid
// submit (the process resumes).  Returns the form's definition.
export async function renderForm(container, pid, name, {onSubmitted, prefix = 'f', title = true} = {}) {
  const def = await api('GET', `/api/v1/process/${enc(pid)}/form/${enc(name)}`);
  const fields = (def.fields || []).map((f) => buildField(f, prefix));
  const summary = h('div', {id: 'form-status', 'aria-live': 'polite'});
  const submit = h('button', {type: 'submit', id: 'form-submit'}, 'Submit');
  const hasFile = fields.some((x) => x.def.type === 'file');

  function body() {
    const values = {};
    for (const x of fields) {
      if (x.readonly) continue;
      const v = x.get();
      if (v !== undefined) values[x.def.name] = v;
    }
    if (!hasFile) return {json: values};
    const fd = new FormData();
    for (const [k, v] of Object.entries(values)) {
      if (v && v.files) v.files.forEach((file) => fd.append(k, file, file.name));
      else for (const one of asList(v)) fd.append(k, typeof one === 'string' ? one : JSON.stringify(one));
    }
    return {body: fd};
  }

  async function onSubmit(ev) {
    ev.preventDefault();
    fields.forEach((x) => x.setError(null));
    mount(summary);
    submit.disabled = true;
    let res;
    try {
      const path = `/api/v1/process/${enc(pid)}/form/${enc(name)}` + (hasFile ? '/multipart' : '');
      res = await api('POST', path, body());
    } catch (e) {
      submit.disabled = false;
      mount(summary, h('p', {class: 'notice error', role: 'alert', id: 'form-error'}, e.message));
      return;
    }
    if (res && res.ok) {
      mount(summary, notice('ok', 'Submitted.'));
      if (onSubmitted) onSubmitted(def);
      return;
    }
    submit.disabled = false;
    const errors = (res && res.errors) || {};
    const other = [];
    let first = null;
    for (const [k, msg] of Object.entries(errors)) {
      const x = fields.find((y) => y.def.name === k);
      if (!x) {
        other.push(`${k}: ${msg}`);
        continue;
      }
      x.setError(String(msg));
      if (!first) first = x;
    }
    const n = Object.keys(errors).length;
    mount(summary, h('p', {class: 'notice error', role: 'alert', id: 'form-error'},
      n === 1 ? 'One field needs attention.' : `${n || 'Some'} fields need attention.`, other.length ? ' ' + other.join('; ') : ''));
    if (first && first.controls().length) first.controls()[0].focus();
  }

  mount(container,
    h('form', {class: 'process-form', id: 'process-form', 'data-form': name, novalidate: true, onsubmit: onSubmit},
      title ? h('h2', {id: 'form-title'}, name) : null,
      h('p', {class: 'hint'}, 'Fields marked * are required.'),
      fields.map((x) => x.el),
      summary,
      h('div', {class: 'actions'}, submit)));
  return def;
}
