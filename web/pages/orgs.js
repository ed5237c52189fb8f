// #/orgs?filter=&offset= — the organizations the user can see, by name, with a filter and
// paging.
import {api, qs} from '../lib/api.js';
import {h} from '../lib/dom.js';
import {filterForm, loadPage, pager, path, table} from '../lib/admin.js';

const LIMIT = 50;

export async function render(main, params, query) {
  const filter = query.filter || '';
  const offset = Math.max(0, parseInt(query.offset, 10) || 0);
  await loadPage(main, 'orgs', 'Organizations', async () => {
    main.append(h('h1', {}, 'Organizations'), filterForm('#/orgs', filter, 'orgs-filter', 'Filter by name'));
    const orgs = await api('GET', '/api/v1/org' + qs({filter, offset: offset || null, limit: LIMIT + 1}));
    const rows = orgs.slice(0, LIMIT).map((o) => [
      h('a', {href: '#/' + path('org', o.name), 'data-test': 'org-link'}, o.name),
      o.visibility,
      (o.owner && o.owner.username) || '',
      h('a', {href: '#/' + path('org', o.name) + '/secrets'}, 'Secrets'),
    ]);
    main.append(table('orgs', ['Name', 'Visibility', 'Owner', ''], rows,
      filter ? `No organization's name contains "${filter}".` : 'You see no organization. An administrator creates them, and adds you to one of its teams.'));
    main.append(pager('#/orgs', filter, offset, LIMIT, orgs.length > LIMIT, 'orgs'));
  });
}
