// #/org/{org}/jsonstore/{store}?filter=&offset= — one JSON store: its details and capacity,
// its items (paged, filtered by path, each opening jsonstore_item.js), its named queries
// (each opening jsonstore_query.js), forms adding an item and a query for writers, the team
// access rules for owners (a plain list for the others) and a delete with confirmation.
import {api, qs} from '../lib/api.js';
import {h} from '../lib/dom.js';
import {flash} from '../lib/flash.js';
import {allows, notAllowed, rulesForm, rulesList} from '../lib/access_rules.js';
import {busy, crumbs, deletePanel, details, errorBox, field, filterForm, loadPage, pager, path, table, uid} from '../lib/admin.js';
import {capacityText, getStore, jsonBox, parseJson, storeApi, storeCrumbs, storeHash} from './jsonstore_parts.js';

const LIMIT = 50;
const QUERIES = 100;

export async function render(main, params, query) {
  const {org, store} = params;
  const filter = query.filter || '';
  const offset = Math.max(0, parseInt(query.offset, 10) || 0);
  const base = storeHash(org, store);
  await loadPage(main, 'jsonstore', `${store} · JSON stores of ${org}`, async () => {
    main.append(crumbs(...storeCrumbs(org), [store]), h('h1', {}, store));
    const [s, capacity, items, queries, rules] = await Promise.all([
      getStore(org, store),
      api('GET', storeApi(org, store, 'capacity')),
      api('GET', storeApi(org, store, 'item') + qs({filter, offset: offset || null, limit: LIMIT + 1})),
      api('GET', storeApi(org, store, 'query') + qs({limit: QUERIES + 1})),
      api('GET', storeApi(org, store, 'access')),
    ]);
    const have = s.yourAccess;
    main.append(details('jsonstore-details', [
      ['Visibility', s.visibility],
      ['Owner', s.owner && s.owner.username],
      ['Size', h('span', {'data-test': 'jsonstore-capacity'}, capacityText(capacity))],
      ['Your access', have],
    ]));

    main.append(h('h2', {}, 'Items'), filterForm(base, filter, 'items-filter', 'Filter items by path'));
    const rows = items.slice(0, LIMIT).map((p) => [
      h('a', {href: storeHash(org, store, 'item') + qs({path: p}), 'data-test': 'item-link'}, p)]);
    main.append(table('items', ['Path'], rows,
      filter ? `No item's path contains "${filter}".` : 'No items yet.'),
    pager(base, filter, offset, LIMIT, items.length > LIMIT, 'items'));

    main.append(h('h2', {}, 'Queries'));
    const qrows = queries.slice(0, QUERIES).map((q) => [
      h('a', {href: storeHash(org, store, 'query', q.name), 'data-test': 'query-link'}, q.name),
      h('code', {class: 'mono'}, q.text)]);
    main.append(table('queries', ['Name', 'Text'], qrows, 'No queries yet.'));
    if (queries.length > QUERIES) main.append(h('p', {class: 'hint'}, `Only the first ${QUERIES} queries are listed.`));

    if (allows(have, 'WRITER')) main.append(itemForm(org, store), queryForm(org, store));
    else main.append(notAllowed('jsonstore-not-allowed', 'Adding items and queries', 'WRITER', have));

    if (!allows(have, 'OWNER')) {
      main.append(h('div', {class: 'panel'}, h('h2', {}, 'Access rules'), rulesList(rules),
        notAllowed('rules-not-allowed', 'Changing the access rules or deleting the store', 'OWNER', have)));
      return;
    }
    const teams = await api('GET', '/api/v1/' + path('org', org, 'team')).catch(() => []);
    main.append(rulesForm(storeApi(org, store), teams, rules),
      deletePanel('jsonstore-delete', 'Delete JSON store',
        `Delete the JSON store "${store}" with all its items and queries?`, async () => {
          await api('DELETE', storeApi(org, store));
          flash(`JSON store "${store}" deleted.`);
          location.hash = '#/' + path('org', org, 'jsonstores');
        }));
  });
}

// Adds an item at a new path (an existing one is opened for editing instead of replaced).
function itemForm(org, store) {
  const itemPath = h('input', {type: 'text', required: true, autocomplete: 'off', spellcheck: 'false', 'data-test': 'item-path'});
  const data = jsonBox('item-data', '{\n  \n}', {rows: 6});
  const box = errorBox('item-add-error');
  const submit = h('button', {type: 'submit', 'data-test': 'item-add'}, 'Add item');
  const titleId = uid('add-item');
  const form = h('form', {'aria-labelledby': titleId, 'data-test': 'item-form'},
    h('h2', {id: titleId}, 'New item'),
    field('Path', itemPath, 'For example "services/web1": slashes make folders.'),
    field('Data', data, 'A JSON object.'),
    box.el, h('p', {}, submit));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, box, async () => {
      const p = itemPath.value.trim();
      const value = parseJson(data.value, 'The data');
      const url = storeApi(org, store, 'item', ...p.split('/'));
      if (await api('GET', url) !== null) throw new Error(`An item at "${p}" exists already: open it to change it.`);
      await api('PUT', url, {json: value});
      flash(`Item "${p}" added.`);
      location.hash = storeHash(org, store, 'item') + qs({path: p});
    });
  });
  return h('div', {class: 'panel'}, form);
}

// Creates a named query (a name already used is refused rather than overwritten).
function queryForm(org, store) {
  const name = h('input', {type: 'text', required: true, autocomplete: 'off', spellcheck: 'false', 'data-test': 'query-name'});
  const text = h('textarea', {rows: 4, class: 'mono', spellcheck: 'false', 'data-test': 'query-text'});
  text.value = 'select item_data from json_store_data where item_data @> ?::jsonb';
  const box = errorBox('query-add-error');
  const submit = h('button', {type: 'submit', 'data-test': 'query-add'}, 'Create query');
  const titleId = uid('add-query');
  const form = h('form', {'aria-labelledby': titleId, 'data-test': 'query-form'},
    h('h2', {id: titleId}, 'New query'),
    field('Name', name),
    field('SQL', text, 'Reads json_store_data (json_store_id, item_path, item_data, item_data_size); ' +
      '? is the JSON object given when it runs. Each row must be one JSON value.'),
    box.el, h('p', {}, submit));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, box, async () => {
      const n = name.value.trim();
      if (!n) throw new Error('Give the query a name.');
      const same = await api('GET', storeApi(org, store, 'query') + qs({filter: n, limit: 1000}));
      if (same.some((q) => q.name === n)) throw new Error(`A query named "${n}" exists already: open it to change it.`);
      await api('POST', storeApi(org, store, 'query'), {json: {name: n, text: text.value}});
      flash(`Query "${n}" created.`);
      location.hash = storeHash(org, store, 'query', n);
    });
  });
  return h('div', {class: 'panel'}, form);
}
