// The configuration panels of a project page: its cfg (GET/PUT …/cfg, merged into every
// process of the project below the definition) as editable JSON, and "Encrypt a value"
// (POST …/encrypt), whose result crypto.decryptString opens in this project's processes.
import {api} from '../lib/api.js';
import {h} from '../lib/dom.js';
import {busy, copyable, errorBox, field, path} from '../lib/admin.js';

// The cfg as JSON text; saving needs WRITER on the project: a reader (writer false, from the
// project's yourAccess) sees it read-only.
export async function cfgPanel(org, project, writer = true) {
  const url = '/api/v1/' + path('org', org, 'project', project, 'cfg');
  const cfg = await api('GET', url);
  const text = h('textarea', {rows: 10, class: 'mono', spellcheck: 'false', 'data-test': 'cfg-text'});
  text.value = JSON.stringify(cfg, null, 2);
  text.readOnly = !writer;
  const box = errorBox('cfg-error');
  const save = h('button', {type: 'submit', 'data-test': 'cfg-save'}, 'Save configuration');
  const form = h('form', {'data-test': 'cfg-form'},
    field('Configuration (JSON object)', text,
      'Merged into every process of this project: below the definition\'s configuration, its profiles and the ' +
      'request; the organization\'s cfg is below it. For example {"arguments": {"env": "test"}}.'),
    box.el, writer ? h('p', {}, save) : h('p', {class: 'hint', 'data-test': 'cfg-not-allowed'},
      'Changing the configuration needs the writer level on the project.'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(save, box, async () => {
      let value;
      try {
        value = JSON.parse(text.value.trim() || '{}');
      } catch (e) {
        throw new Error('Not valid JSON: ' + e.message);
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value))
        throw new Error('The configuration must be a JSON object.');
      await api('PUT', url, {json: value});
      text.value = JSON.stringify(value, null, 2);
      box.ok('Saved.');
    });
  });
  return h('section', {'data-test': 'cfg-panel'}, h('h2', {}, 'Configuration'), form);
}

// The value goes to the server once and is never shown again; the answer can be copied.
export function encryptPanel(org, project) {
  const value = h('textarea', {rows: 2, class: 'mono', spellcheck: 'false', autocomplete: 'off', 'data-test': 'encrypt-value'});
  const box = errorBox('encrypt-error');
  const out = h('div', {'data-test': 'encrypt-result'});
  const submit = h('button', {type: 'submit', 'data-test': 'encrypt-submit'}, 'Encrypt');
  const form = h('form', {'data-test': 'encrypt-form'},
    field('Value', value, 'Only processes of this project can decrypt the result: ${crypto.decryptString(value)}.'),
    box.el, h('p', {}, submit), out);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, box, async () => {
      out.replaceChildren();
      const r = await api('POST', '/api/v1/' + path('org', org, 'project', project, 'encrypt'),
        {body: value.value, headers: {'Content-Type': 'text/plain; charset=utf-8'}});
      value.value = '';
      out.append(copyable('Encrypted value', r.data, 'encrypt-output'));
    });
  });
  return h('details', {class: 'panel', 'data-test': 'encrypt-panel'}, h('summary', {}, 'Encrypt a value'), form);
}
