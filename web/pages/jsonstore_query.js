// #/org/{org}/jsonstore/{store}/query/{query} — one named query of a JSON store: its SQL,
// which writers edit and save (POST …/query) or delete; and a run (POST …/query/{q}/exec,
// readers too) with the parameters given as a JSON object, its rows shown one per line.
import {api} from '../lib/api.js';
import {h, mount} from '../lib/dom.js';
import {flash} from '../lib/flash.js';
import {allows, notAllowed} from '../lib/access_rules.js';
import {busy, crumbs, deletePanel, errorBox, field, loadPage, table, uid} from '../lib/admin.js';
import {getStore, jsonBox, parseJson, pretty, storeApi, storeCrumbs, storeHash} from './jsonstore_parts.js';

export async function render(main, params) {
  const {org, store, query: name} = params;
  const url = storeApi(org, store, 'query', name);
  await loadPage(main, 'jsonstore-query', `${name} · ${store}`, async () => {
    main.append(crumbs(...storeCrumbs(org), [store, storeHash(org, store)], [name]), h('h1', {}, name));
    const [s, q] = await Promise.all([getStore(org, store), api('GET', url)]);
    if (allows(s.yourAccess, 'WRITER')) {
      main.append(textForm(org, store, name, q.text));
    } else {
      main.append(h('h2', {}, 'SQL'), h('pre', {class: 'json', 'data-test': 'query-sql', tabindex: 0, 'aria-label': 'The query'}, q.text),
        notAllowed('query-not-allowed', 'Changing this query', 'WRITER', s.yourAccess));
    }
    main.append(runForm(url));
    if (allows(s.yourAccess, 'WRITER')) {
      main.append(deletePanel('query-delete', 'Delete query', `Delete the query "${name}"?`, async () => {
        await api('DELETE', url);
        flash(`Query "${name}" deleted.`);
        location.hash = storeHash(org, store);
      }));
    }
  });
}

function textForm(org, store, name, text) {
  const box = h('textarea', {rows: 6, class: 'mono', spellcheck: 'false', 'data-test': 'query-text'});
  box.value = text;
  const result = errorBox('query-save-result');
  const submit = h('button', {type: 'submit', 'data-test': 'query-save'}, 'Save');
  const titleId = uid('sql');
  const form = h('form', {'aria-labelledby': titleId, 'data-test': 'query-form'},
    h('h2', {id: titleId}, 'SQL'),
    field('Query', box, 'Reads json_store_data (json_store_id, item_path, item_data, item_data_size); ' +
      '? is the JSON object given when it runs. Checked when saved.'),
    result.el, h('p', {}, submit));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, result, async () => {
      const r = await api('POST', storeApi(org, store, 'query'), {json: {name, text: box.value}});
      result.ok(r.result === 'ALREADY_EXISTS' ? 'No change to save.' : 'Saved.');
    });
  });
  return h('div', {class: 'panel'}, form);
}

// Runs the saved query; params: a JSON object for its ? placeholder, or empty for none.
function runForm(url) {
  const params = jsonBox('query-params', '', {rows: 3});
  const box = errorBox('query-run-error');
  const out = h('div', {'data-test': 'query-result', 'aria-live': 'polite'});
  const submit = h('button', {type: 'submit', 'data-test': 'query-run'}, 'Run');
  const titleId = uid('run');
  const form = h('form', {'aria-labelledby': titleId, 'data-test': 'query-run-form'},
    h('h2', {id: titleId}, 'Run'),
    field('Parameters (JSON, optional)', params,
      'A JSON object for the query\'s ? placeholder, e.g. {"users": ["mike"]}; empty: none. Runs the saved SQL.'),
    box.el, h('p', {}, submit));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    mount(out);
    busy(submit, box, async () => {
      const opts = params.value.trim() ? {json: parseJson(params.value, 'The parameters')} : {};
      const rows = await api('POST', url + '/exec', opts);
      mount(out, h('p', {'data-test': 'query-row-count', role: 'status'}, `${rows.length} row${rows.length === 1 ? '' : 's'}.`),
        table('query-rows', ['#', 'Row'], rows.map((r, i) => [String(i + 1), h('pre', {'data-test': 'query-row'}, pretty(r))]),
          'The query returned no rows.'));
    });
  });
  return h('div', {class: 'panel'}, form, out);
}
