// #/audit?object=&action=&username=&after=&before=&offset= — the audit log (admins only):
// who changed what, when and from where, newest first, filtered by kind of object, action,
// user and time.  The filters live in the hash, so reloads and the back button keep them.
// Times are typed in the zone the user chose (lib/zone.js) and sent as that instant.
import {api, qs} from '../lib/api.js';
import {h, when} from '../lib/dom.js';
import {field, loadPage, select, table} from '../lib/admin.js';
import {zone, zoneName} from '../lib/zone.js';

const LIMIT = 50;
const OBJECTS = ['USER', 'API_KEY', 'ORGANIZATION', 'TEAM', 'PROJECT', 'REPOSITORY', 'INVENTORY', 'INVENTORY_QUERY',
  'SECRET', 'JSON_STORE', 'JSON_STORE_DATA', 'JSON_STORE_QUERY', 'PROCESS', 'EXTERNAL_EVENT'];
const ACTIONS = ['CREATE', 'UPDATE', 'DELETE', 'ACCESS', 'START', 'STOP', 'RESUME', 'RESTORE'];

// "2026-11-23T18:04" typed in the chosen zone ↔ an ISO instant.
export function zonedToIso(value) {
  if (!value) return '';
  const d = new Date(zone() === 'UTC' ? value + 'Z' : value);
  return isNaN(d) ? '' : d.toISOString();
}

export function isoToZoned(iso) {
  const d = new Date(iso);
  if (!iso || isNaN(d)) return '';
  if (zone() === 'UTC') return d.toISOString().slice(0, 16);
  const local = new Date(d.getTime() - d.getTimezoneOffset() * 60000);
  return local.toISOString().slice(0, 16);
}

export async function render(main, params, query) {
  const offset = Math.max(0, parseInt(query.offset, 10) || 0);
  const filters = {object: query.object || '', action: query.action || '', username: query.username || '',
    after: query.after || '', before: query.before || ''};
  await loadPage(main, 'audit', 'Audit log', async () => {
    main.append(h('h1', {}, 'Audit log'),
      h('p', {class: 'hint'}, 'Every change made through the API or the console, newest first. Only administrators see it.'),
      filterForm(filters));
    const entries = await api('GET', '/api/v1/audit' + qs(Object.assign({}, filters, {offset: offset || null, limit: LIMIT + 1})));
    const rows = entries.slice(0, LIMIT).map((e) => [
      when(e.entryDate),
      h('span', {'data-test': 'audit-user'}, (e.user && e.user.username) || ''),
      h('span', {'data-test': 'audit-object'}, e.object),
      h('span', {'data-test': 'audit-action'}, e.action),
      describe(e.details || {}),
    ]);
    const any = Object.values(filters).some(Boolean);
    main.append(table('audit', [`Time (${zoneName()})`, 'User', 'Object', 'Action', 'Details'], rows,
      any ? 'No entry matches these filters.' : 'The audit log is empty.'));
    // previous/next keep the filters
    const link = (o, text, t) => h('a', {href: '#/audit' + qs(Object.assign({}, filters, {offset: o || null})), class: 'btn secondary', 'data-test': t}, text);
    main.append(h('div', {class: 'row'},
      offset > 0 ? link(Math.max(0, offset - LIMIT), 'Previous', 'audit-prev') : null,
      entries.length > LIMIT ? link(offset + LIMIT, 'Next', 'audit-next') : null));
  });
}

// The names of what changed and how the request came (never a value: the server keeps none).
function describe(d) {
  const parts = [];
  for (const [k, v] of Object.entries(d)) {
    if (k === 'actionSource' && v && typeof v === 'object') {
      parts.push(`via ${v.type || '?'}${v.address ? ' from ' + v.address : ''}${v.instanceId ? ' (process ' + v.instanceId + ')' : ''}`);
    } else if (v !== null && typeof v !== 'object' && !/Id$/.test(k)) {
      parts.push(`${k}: ${v}`);
    } else if (Array.isArray(v)) {
      parts.push(`${k}: ${v.join(', ')}`);
    }
  }
  return h('span', {class: 'audit-details', 'data-test': 'audit-details'}, parts.join('; '));
}

function filterForm(f) {
  const object = select({name: 'object', 'data-test': 'audit-filter-object'}, [['', '(any)'], ...OBJECTS], f.object);
  const action = select({name: 'action', 'data-test': 'audit-filter-action'}, [['', '(any)'], ...ACTIONS], f.action);
  const username = h('input', {type: 'text', name: 'username', value: f.username, autocomplete: 'off', 'data-test': 'audit-filter-user'});
  const after = h('input', {type: 'datetime-local', name: 'after', value: isoToZoned(f.after), 'data-test': 'audit-filter-after'});
  const before = h('input', {type: 'datetime-local', name: 'before', value: isoToZoned(f.before), 'data-test': 'audit-filter-before'});
  const form = h('form', {class: 'row', role: 'search', 'data-test': 'audit-filters'},
    field('Object', object), field('Action', action), field('User', username),
    field(`After (${zoneName()})`, after), field(`Before (${zoneName()})`, before),
    h('button', {type: 'submit', 'data-test': 'audit-filter-apply'}, 'Filter'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    location.hash = '#/audit' + qs({object: object.value, action: action.value, username: username.value.trim(),
      after: zonedToIso(after.value), before: zonedToIso(before.value)});
  });
  return form;
}
