// #/org/{org}?filter=&offset= — an organization: its details, links to its secrets and
// processes, and its projects.
import {api, qs} from '../lib/api.js';
import {h} from '../lib/dom.js';
import {crumbs, details, filterForm, loadPage, pager, path, table} from '../lib/admin.js';

const LIMIT = 50;

export async function render(main, params, query) {
  const {org} = params;
  const filter = query.filter || '';
  const offset = Math.max(0, parseInt(query.offset, 10) || 0);
  const base = '#/' + path('org', org);
  await loadPage(main, 'org', async () => {
    main.append(crumbs(['Organizations', '#/orgs'], [org]), h('h1', {}, org));
    const o = await api('GET', '/api/v1/' + path('org', org));
    main.append(details('org-details', [
      ['Visibility', o.visibility],
      ['Owner', o.owner && o.owner.username],
    ]));
    main.append(h('p', {class: 'row'},
      h('a', {href: base + '/secrets', class: 'btn secondary', 'data-test': 'org-secrets'}, 'Secrets'),
      h('a', {href: '#/processes' + qs({org}), class: 'btn secondary', 'data-test': 'org-processes'}, 'Processes')));
    main.append(h('h2', {}, 'Projects'), filterForm(base, filter, 'projects-filter', 'Filter projects by name'));
    const projects = await api('GET', `/api/v1/${path('org', org, 'project')}` + qs({filter, offset: offset || null, limit: LIMIT + 1}));
    const rows = projects.slice(0, LIMIT).map((p) => [
      h('a', {href: '#/' + path('org', org, 'project', p.name), 'data-test': 'project-link'}, p.name),
      p.description || '',
      p.visibility,
      Object.keys(p.repositories || {}).length,
    ]);
    main.append(table('projects', ['Name', 'Description', 'Visibility', 'Repositories'], rows,
      filter ? `No project's name contains "${filter}".` : 'No project you may read.'));
    main.append(pager(base, filter, offset, LIMIT, projects.length > LIMIT, 'projects'));
  });
}
