// #/org/{org}/teams — the teams of an organization (members of the org see them) and a form
// creating one (owners of the org; the creator becomes its maintainer).
import {api} from '../lib/api.js';
import {h} from '../lib/dom.js';
import {flash} from '../lib/flash.js';
import {busy, crumbs, errorBox, field, loadPage, path, table} from '../lib/admin.js';

export async function render(main, params) {
  const {org} = params;
  await loadPage(main, 'teams', `Teams · ${org}`, async () => {
    main.append(crumbs(['Organizations', '#/orgs'], [org, '#/' + path('org', org)], ['Teams']), h('h1', {}, 'Teams'));
    const teams = await api('GET', '/api/v1/' + path('org', org, 'team'));
    const rows = teams.map((t) => [
      h('a', {href: '#/' + path('org', org, 'team', t.name), 'data-test': 'team-link'}, t.name), t.description || '']);
    main.append(table('teams', ['Name', 'Description'], rows, 'This organization has no team yet. Create one below.'),
      createForm(org));
  });
}

function createForm(org) {
  const name = h('input', {type: 'text', required: true, autocomplete: 'off', spellcheck: 'false', 'data-test': 'team-name'});
  const description = h('input', {type: 'text', maxlength: 1024, autocomplete: 'off', 'data-test': 'team-description'});
  const box = errorBox('team-create-error');
  const submit = h('button', {type: 'submit', 'data-test': 'team-create'}, 'Create team');
  const form = h('form', {'data-test': 'team-form'},
    field('Name', name), field('Description (optional)', description), box.el, h('p', {}, submit));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, box, async () => {
      const body = {name: name.value.trim()};
      if (description.value.trim()) body.description = description.value.trim();
      await api('POST', '/api/v1/' + path('org', org, 'team'), {json: body});
      flash(`Team "${body.name}" created; you are its maintainer.`);
      location.hash = '#/' + path('org', org, 'team', body.name);
    });
  });
  return h('details', {class: 'panel', 'data-test': 'team-create-panel'},
    h('summary', {}, 'Create a team'),
    h('p', {class: 'hint'}, 'Owners of the organization create teams. Being in a team makes a user a member of the organization.'),
    form);
}
