// #/org/{org}/project/{project} — a project: its details and its repositories.
import {api, qs} from '../lib/api.js';
import {h, when} from '../lib/dom.js';
import {crumbs, details, loadPage, path, table} from '../lib/admin.js';

export async function render(main, params) {
  const {org, project} = params;
  await loadPage(main, 'project', `${project} · ${org}`, async () => {
    main.append(crumbs(['Organizations', '#/orgs'], [org, '#/' + path('org', org)], [project]), h('h1', {}, project));
    const p = await api('GET', '/api/v1/' + path('org', org, 'project', project));
    main.append(details('project-details', [
      ['Description', p.description],
      ['Visibility', p.visibility],
      ['Owner', p.owner && p.owner.username],
      ['Raw payloads', p.rawPayloadMode],
      ['Created', when(p.createdAt)],
    ]));
    main.append(h('p', {class: 'row'},
      h('a', {href: '#/processes' + qs({org, project}), class: 'btn secondary', 'data-test': 'project-processes'}, 'Processes')));
    const repos = await api('GET', '/api/v1/' + path('org', org, 'project', project, 'repository') + qs({limit: 1000}));
    const rows = repos.map((r) => [
      h('a', {href: '#/' + path('org', org, 'project', project, 'repo', r.name), 'data-test': 'repo-link'}, r.name),
      h('span', {class: 'mono'}, r.url),
      r.commitId ? h('span', {class: 'mono', title: 'pinned commit'}, r.commitId.slice(0, 12)) : r.branch || '(default branch)',
      r.path || '',
      r.disabled ? 'disabled' : '',
    ]);
    main.append(h('h2', {}, 'Repositories'),
      table('repos', ['Name', 'URL', 'Branch or commit', 'Path', ''], rows, 'This project has no repository.'));
  });
}
