// #/org/{org}?filter=&offset= — an organization: its details, links to its secrets and
// processes, its projects and its first secrets.
import {api, qs} from '../lib/api.js';
import {h} from '../lib/dom.js';
import {crumbs, details, filterForm, loadPage, pager, path, table} from '../lib/admin.js';

const LIMIT = 50;
const SECRETS = 10;

export async function render(main, params, query) {
  const {org} = params;
  const filter = query.filter || '';
  const offset = Math.max(0, parseInt(query.offset, 10) || 0);
  const base = '#/' + path('org', org);
  await loadPage(main, 'org', org, async () => {
    main.append(crumbs(['Organizations', '#/orgs'], [org]), h('h1', {}, org));
    const o = await api('GET', '/api/v1/' + path('org', org));
    main.append(details('org-details', [
      ['Visibility', o.visibility],
      ['Owner', o.owner && o.owner.username],
    ]));
    main.append(h('p', {class: 'row'},
      h('a', {href: base + '/secrets', class: 'btn secondary', 'data-test': 'org-secrets'}, 'Secrets'),
      h('a', {href: base + '/jsonstores', class: 'btn secondary', 'data-test': 'org-jsonstores'}, 'JSON stores'),
      h('a', {href: '#/processes' + qs({org}), class: 'btn secondary', 'data-test': 'org-processes'}, 'Processes'),
      h('a', {href: base + '/teams', class: 'btn secondary', 'data-test': 'org-teams'}, 'Teams'),
      h('a', {href: base + '/new-project', class: 'btn', 'data-test': 'org-new-project'}, 'New project')));
    main.append(h('h2', {}, 'Projects'), filterForm(base, filter, 'projects-filter', 'Filter projects by name'));
    const projects = await api('GET', `/api/v1/${path('org', org, 'project')}` + qs({filter, offset: offset || null, limit: LIMIT + 1}));
    const rows = projects.slice(0, LIMIT).map((p) => [
      h('a', {href: '#/' + path('org', org, 'project', p.name), 'data-test': 'project-link'}, p.name),
      p.description || '',
      p.visibility,
      Object.keys(p.repositories || {}).length,
    ]);
    main.append(table('projects', ['Name', 'Description', 'Visibility', 'Repositories'], rows,
      filter ? `No project's name contains "${filter}".` : 'No project you may read. An owner of the organization creates projects, or gives your team access to one.'));
    main.append(pager(base, filter, offset, LIMIT, projects.length > LIMIT, 'projects'));
    main.append(h('h2', {}, 'Secrets'), await secrets(org));
  });
}

// The first secrets of the organization (names and types only), with a link to all of them;
// only members see them.
async function secrets(org) {
  const all = '#/' + path('org', org, 'secrets');
  let list;
  try {
    list = await api('GET', '/api/v1/' + path('org', org, 'secret') + qs({limit: SECRETS + 1}));
  } catch (e) {
    if (e.status === 403) return h('p', {class: 'hint', 'data-test': 'org-secrets-none'}, 'Only members of the organization see its secrets.');
    throw e;
  }
  const rows = list.slice(0, SECRETS).map((s) => [
    h('a', {href: '#/' + path('org', org, 'secret', s.name), 'data-test': 'secret-link'}, s.name), s.type, s.visibility]);
  return h('div', {},
    table('org-secrets-list', ['Name', 'Type', 'Visibility'], rows, 'No secret you may read.'),
    h('p', {}, h('a', {href: all}, list.length > SECRETS ? 'All secrets…' : 'Manage secrets')));
}
