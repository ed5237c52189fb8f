// #/org/{org}/project/{project} — a project: its details, its repositories and a form
// adding one, its configuration and "Encrypt a value" (project_cfg.js), its settings and
// team access (project_settings.js).
import {api, qs} from '../lib/api.js';
import {h, mount, when} from '../lib/dom.js';
import {busy, crumbs, details, errorBox, field, loadPage, path, select, table} from '../lib/admin.js';
import {cfgPanel, encryptPanel} from './project_cfg.js';
import {accessPanel, settingsPanel} from './project_settings.js';
import {allows, notAllowed} from '../lib/access_rules.js';
import {gitSecrets} from './repo_edit.js';

export async function render(main, params) {
  const {org, project} = params;
  await loadPage(main, 'project', `${project} · ${org}`, async () => {
    main.append(crumbs(['Organizations', '#/orgs'], [org, '#/' + path('org', org)], [project]), h('h1', {}, project));
    const p = await api('GET', '/api/v1/' + path('org', org, 'project', project));
    const writer = allows(p.yourAccess, 'WRITER'); // what the server says the user may do
    const projectDetails = (p) => details('project-details', [
      ['Description', p.description],
      ['Visibility', p.visibility],
      ['Owner', p.owner && p.owner.username],
      ['Raw payloads', p.rawPayloadMode],
      ['Created', when(p.createdAt)],
    ]);
    const detailsHolder = h('div', {}, projectDetails(p));
    main.append(detailsHolder);
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
      table('repos', ['Name', 'URL', 'Branch or commit', 'Path', ''], rows, 'This project has no repository. Add one below (Add a repository) to start processes from it.'),
      writer ? await addRepoForm(org, project) : notAllowed('repo-add-not-allowed', 'Adding a repository', 'WRITER', p.yourAccess));
    main.append(await cfgPanel(org, project, writer), encryptPanel(org, project));
    const saved = async () => mount(detailsHolder, projectDetails(await api('GET', '/api/v1/' + path('org', org, 'project', project))));
    main.append(settingsPanel(org, p, saved), await accessPanel(org, project, p.yourAccess));
  });
}

// Adds a repository (POST …/repository): the server fetches it and reads its definition
// before storing anything, and says what failed.
async function addRepoForm(org, project) {
  const name = h('input', {type: 'text', required: true, autocomplete: 'off', 'data-test': 'repo-name'});
  const url = h('input', {type: 'text', required: true, autocomplete: 'off', spellcheck: 'false', 'data-test': 'repo-url'});
  const branch = h('input', {type: 'text', autocomplete: 'off', 'data-test': 'repo-branch'});
  const commit = h('input', {type: 'text', autocomplete: 'off', spellcheck: 'false', 'data-test': 'repo-commit'});
  const dir = h('input', {type: 'text', autocomplete: 'off', 'data-test': 'repo-path'});
  const secret = select({'data-test': 'repo-secret'}, [['', '(none)'], ...(await gitSecrets(org))], '');
  const box = errorBox('repo-error');
  const submit = h('button', {type: 'submit', 'data-test': 'repo-add'}, 'Add repository');
  const form = h('form', {'data-test': 'repo-form'},
    field('Name', name),
    field('URL', url, 'https://…, ssh://…, user@host:path, or file:///path for a repository on the server.'),
    field('Branch or tag (optional)', branch, "Empty: the remote's default branch."),
    field('Commit (optional)', commit, 'A pinned commit (40 hex digits), instead of a branch.'),
    field('Path (optional)', dir, 'The folder holding concord.yml; empty: the root.'),
    field('Credentials (optional)', secret),
    box.el, h('p', {}, submit));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, box, async () => {
      const body = {name: name.value.trim(), url: url.value.trim()};
      for (const [k, el] of [['branch', branch], ['commitId', commit], ['path', dir], ['secretName', secret]])
        if (el.value.trim()) body[k] = el.value.trim();
      await api('POST', '/api/v1/' + path('org', org, 'project', project, 'repository'), {json: body});
      location.hash = '#/' + path('org', org, 'project', project, 'repo', body.name);
    });
  });
  return h('details', {class: 'panel', 'data-test': 'repo-add-panel'}, h('summary', {}, 'Add a repository'), form);
}
