// #/org/{org}/new-project — creates a project (POST /api/v1/org/{org}/project) and goes to
// its page, where repositories, configuration and access are added.
import {api} from '../lib/api.js';
import {h} from '../lib/dom.js';
import {flash} from '../lib/flash.js';
import {busy, crumbs, errorBox, field, loadPage, path} from '../lib/admin.js';
import {projectFields} from './project_settings.js';

export async function render(main, params) {
  const {org} = params;
  await loadPage(main, 'project-new', `New project · ${org}`, async () => {
    main.append(crumbs(['Organizations', '#/orgs'], [org, '#/' + path('org', org)], ['New project']),
      h('h1', {}, 'New project'));
    const name = h('input', {type: 'text', required: true, autocomplete: 'off', spellcheck: 'false', 'data-test': 'project-name'});
    const f = projectFields({});
    const box = errorBox('project-new-error');
    const submit = h('button', {type: 'submit', 'data-test': 'project-create'}, 'Create project');
    const form = h('form', {'data-test': 'project-new-form'},
      field('Name', name, '3 to 128 characters; the server says which ones it refuses.'),
      f.fields, box.el, h('p', {}, submit));
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      busy(submit, box, async () => {
        const body = Object.assign({name: name.value.trim()}, f.values());
        await api('POST', '/api/v1/' + path('org', org, 'project'), {json: body});
        flash(`Project "${body.name}" created. Add a repository to start processes from it.`);
        location.hash = '#/' + path('org', org, 'project', body.name);
      });
    });
    main.append(h('div', {class: 'panel'}, form));
    name.focus();
  });
}
