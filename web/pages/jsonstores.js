// #/org/{org}/jsonstores?filter=&offset= — an organization's JSON stores: name, visibility,
// owner and how full each is (GET …/capacity), a delete for those the user owns, and a
// form creating one for members of the organization (and administrators).
import {api, qs} from '../lib/api.js';
import {h, mount, notice} from '../lib/dom.js';
import {flash} from '../lib/flash.js';
import {session} from '../lib/session.js';
import {allows} from '../lib/access_rules.js';
import {busy, confirm, crumbs, errorBox, field, filterForm, loadPage, pager, path, select, uid, table} from '../lib/admin.js';
import {capacityText} from './jsonstore_parts.js';

const LIMIT = 25;

export async function render(main, params, query) {
  const {org} = params;
  const filter = query.filter || '';
  const offset = Math.max(0, parseInt(query.offset, 10) || 0);
  const base = '#/' + path('org', org, 'jsonstores');
  await loadPage(main, 'jsonstores', `JSON stores of ${org}`, async () => {
    main.append(crumbs(['Organizations', '#/orgs'], [org, '#/' + path('org', org)], ['JSON stores']),
      h('h1', {}, `JSON stores of ${org}`));
    const holder = h('div', {'data-test': 'jsonstores-holder'});
    const reload = () => showList(holder, org, filter, offset, base);
    await reload();
    main.append(filterForm(base, filter, 'jsonstores-filter', 'Filter JSON stores by name'), holder,
      mayCreate(org) ? createForm(org) :
        h('p', {class: 'hint', 'data-test': 'jsonstore-create-not-allowed'},
          'Only members of the organization create JSON stores in it.'));
  });
}

// Members of the organization create stores (the server says so too); admins anywhere.
function mayCreate(org) {
  const u = session.user || {};
  return (u.roles || []).includes('concordAdmin') || (u.orgs || []).some((o) => o.name === org);
}

async function showList(holder, org, filter, offset, base) {
  const stores = await api('GET', '/api/v1/' + path('org', org, 'jsonstore') +
    qs({filter, offset: offset || null, limit: LIMIT + 1}));
  const shown = stores.slice(0, LIMIT);
  const capacities = await Promise.all(shown.map((s) =>
    api('GET', '/api/v1/' + path('org', org, 'jsonstore', s.name, 'capacity')).catch(() => null)));
  const rows = shown.map((s, i) => [
    h('a', {href: '#/' + path('org', org, 'jsonstore', s.name), 'data-test': 'jsonstore-link'}, s.name),
    s.visibility,
    (s.owner && s.owner.username) || '',
    h('span', {'data-test': 'jsonstore-size'}, capacities[i] ? capacityText(capacities[i]) : ''),
    allows(s.yourAccess, 'OWNER') ? deleteCell(org, s.name, () => showList(holder, org, filter, offset, base)) : '',
  ]);
  mount(holder,
    table('jsonstores', ['Name', 'Visibility', 'Owner', 'Size', 'Actions'], rows,
      filter ? `No JSON store's name contains "${filter}".` :
        'No JSON store you may read. Create one with the New JSON store form below.'),
    pager(base, filter, offset, LIMIT, stores.length > LIMIT, 'jsonstores'));
  return holder;
}

// A delete button asking in place before it deletes the store with its items and queries.
function deleteCell(org, name, reload) {
  const cell = h('div', {});
  const btn = h('button', {type: 'button', class: 'danger', 'data-test': 'jsonstore-delete',
    'aria-label': `Delete the JSON store ${name}`}, 'Delete');
  btn.addEventListener('click', () => confirm(cell, `Delete the JSON store "${name}" with all its items and queries?`,
    'Delete', async () => {
      await api('DELETE', '/api/v1/' + path('org', org, 'jsonstore', name));
      const holder = await reload();
      holder.prepend(Object.assign(notice('ok', `JSON store "${name}" deleted.`), {id: 'flash'}));
    }));
  mount(cell, btn);
  return cell;
}

function createForm(org) {
  const name = h('input', {type: 'text', name: 'name', required: true, autocomplete: 'off', 'data-test': 'jsonstore-name'});
  const visibility = select({'data-test': 'jsonstore-visibility'}, [
    ['PRIVATE', 'Private: only its owner and teams with a rule'],
    ['PUBLIC', 'Public: every member of the organization may read it']], 'PRIVATE');
  const max = h('input', {type: 'number', min: 1, step: 1, inputmode: 'numeric', 'data-test': 'jsonstore-max'});
  const box = errorBox('jsonstore-create-error');
  const submit = h('button', {type: 'submit', 'data-test': 'jsonstore-create'}, 'Create JSON store');
  const titleId = uid('create-store');
  const form = h('form', {'data-test': 'jsonstore-form', 'aria-labelledby': titleId},
    h('h2', {id: titleId}, 'New JSON store'),
    field('Name', name, '3–128 letters, digits and _ @ . - ~, starting with a letter or digit.'),
    field('Visibility', visibility),
    field('Maximum size in bytes (optional)', max, "Empty: the server's default limit."),
    box.el, h('p', {}, submit));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, box, async () => {
      const n = name.value.trim();
      const body = {name: n, visibility: visibility.value};
      if (max.value !== '') body.maxDataSize = Number(max.value);
      await api('POST', '/api/v1/' + path('org', org, 'jsonstore'), {json: body});
      flash(`JSON store "${n}" created.`);
      location.hash = '#/' + path('org', org, 'jsonstore', n);
    });
  });
  return h('div', {class: 'panel'}, form);
}
