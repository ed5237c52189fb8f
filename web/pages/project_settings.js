// The settings panels of a project page: description, visibility and raw payload mode
// (POST /api/v1/org/{org}/project, matched by id, so only what the form shows changes),
// and the team access rules (…/access, lib/access_rules.js).
import {api} from '../lib/api.js';
import {allows, notAllowed, rulesForm, rulesList} from '../lib/access_rules.js';
import {h} from '../lib/dom.js';
import {busy, errorBox, field, path, select, uid} from '../lib/admin.js';

// Who may send a raw payload (a zip or files of their own) when starting a process.
export const RAW_PAYLOAD_MODES = [
  ['DISABLED', 'Nobody: processes start from the repositories only'],
  ['OWNERS', 'The project owners'],
  ['TEAM_MEMBERS', 'Members of teams with access to the project'],
  ['ORG_MEMBERS', 'Members of the organization'],
  ['EVERYONE', 'Everyone who may start processes of the project'],
];

export const VISIBILITY_HINT = 'Public: every member of the organization may read the project and start its processes. ' +
  'Private: its owner and the teams given access below.';

// The fields shared by the create page and the settings panel.
export function projectFields(p) {
  const inputs = {
    description: h('textarea', {rows: 2, maxlength: 1024, 'data-test': 'project-description'}),
    visibility: select({'data-test': 'project-visibility'}, ['PUBLIC', 'PRIVATE'], p.visibility || 'PUBLIC'),
    rawPayloadMode: select({'data-test': 'project-raw-payload'}, RAW_PAYLOAD_MODES, p.rawPayloadMode || 'DISABLED'),
  };
  inputs.description.value = p.description || '';
  const fields = [
    field('Description (optional)', inputs.description),
    field('Visibility', inputs.visibility, VISIBILITY_HINT),
    field('Raw payloads', inputs.rawPayloadMode, 'Who may start a process with files of their own instead of a repository.'),
  ];
  const values = () => ({
    description: inputs.description.value.trim(),
    visibility: inputs.visibility.value,
    rawPayloadMode: inputs.rawPayloadMode.value,
  });
  return {inputs, fields, values};
}

// Saving needs WRITER on the project; a reader is told so instead of getting the form.
export function settingsPanel(org, p, saved) {
  if (!allows(p.yourAccess, 'WRITER'))
    return h('div', {class: 'panel'}, h('h2', {}, 'Settings'), notAllowed('settings-not-allowed', 'Changing the settings', 'WRITER', p.yourAccess));
  const f = projectFields(p);
  const box = errorBox('project-settings-result');
  const submit = h('button', {type: 'submit', 'data-test': 'project-settings-save'}, 'Save settings');
  const titleId = uid('project-settings');
  const form = h('form', {'aria-labelledby': titleId, 'data-test': 'project-settings-form'},
    h('h2', {id: titleId}, 'Settings'), f.fields, box.el, h('p', {}, submit));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, box, async () => {
      await api('POST', '/api/v1/' + path('org', org, 'project'), {json: Object.assign({id: p.id}, f.values())});
      box.ok('Saved.');
      await saved();
    });
  });
  return h('div', {class: 'panel'}, form);
}

// The teams of the org and their levels on the project; only owners may change them
// (the others see the list).
export async function accessPanel(org, project, have) {
  const apiBase = '/api/v1/' + path('org', org, 'project', project);
  const [teams, rules] = await Promise.all([
    api('GET', '/api/v1/' + path('org', org, 'team')).catch(() => []), // non-members of the org see no teams
    api('GET', apiBase + '/access'),
  ]);
  if (!allows(have, 'OWNER'))
    return h('div', {class: 'panel', 'data-test': 'project-access'}, h('h2', {}, 'Access rules'), rulesList(rules),
      notAllowed('access-not-allowed', 'Changing the access rules', 'OWNER', have));
  return h('div', {class: 'panel', 'data-test': 'project-access'}, rulesForm(apiBase, teams, rules));
}
