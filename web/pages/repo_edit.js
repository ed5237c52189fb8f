// The edit and validate panels of a repository page, and the list of secrets a repository
// may use (shared with the "Add a repository" form of the project page).  An update is
// fetched and checked by the server before anything is stored; its errors (and those of a
// validate) name file:line:col.
import {api, qs} from '../lib/api.js';
import {h} from '../lib/dom.js';
import {flash} from '../lib/flash.js';
import {go} from '../lib/router.js';
import {busy, errorBox, field, path, select, uid} from '../lib/admin.js';

// The secrets a repository may use for git: key pairs and username/password pairs without
// a store password (the server must open them).  Non-members see none.
export async function gitSecrets(org) {
  try {
    const list = await api('GET', '/api/v1/' + path('org', org, 'secret') + qs({limit: 1000}));
    return list.filter((s) => s.type !== 'DATA' && s.encryptedBy !== 'PASSWORD').map((s) => [s.name, `${s.name} (${s.type})`]);
  } catch (e) {
    if (e.status === 403) return [];
    throw e;
  }
}

// Fetches and loads the definition and reads the triggers; changes nothing (READER).
export function validatePanel(apiBase) {
  const box = errorBox('validate-result');
  const btn = h('button', {type: 'button', class: 'secondary', 'data-test': 'repo-validate'}, 'Validate');
  btn.addEventListener('click', () => busy(btn, box, async () => {
    await api('POST', apiBase + '/validate');
    box.ok('Valid: the definition loads and its triggers parse.');
  }));
  return h('div', {class: 'panel'},
    h('p', {class: 'hint'}, 'Check that the definition at the configured branch or commit loads and its triggers parse, ' +
      'without changing anything. Errors name the file, line and column.'), btn, box.el);
}

// The repository's settings as a form (WRITER); an omitted branch, commit, path or secret
// is cleared by the server, so every field is sent as shown.
export async function editPanel(org, project, r) {
  const input = (test, value) => {
    const el = h('input', {type: 'text', autocomplete: 'off', spellcheck: 'false', 'data-test': test});
    el.value = value || '';
    return el;
  };
  const name = input('repo-edit-name', r.name);
  const url = input('repo-edit-url', r.url);
  const branch = input('repo-edit-branch', r.branch);
  const commit = input('repo-edit-commit', r.commitId);
  const dir = input('repo-edit-path', r.path);
  const secrets = await gitSecrets(org);
  if (r.secretName && !secrets.some(([n]) => n === r.secretName)) secrets.unshift([r.secretName, r.secretName]);
  const secret = select({'data-test': 'repo-edit-secret'}, [['', '(none)'], ...secrets], r.secretName || '');
  const disabled = h('input', {type: 'checkbox', checked: !!r.disabled, 'data-test': 'repo-edit-disabled'});
  const triggersOff = h('input', {type: 'checkbox', checked: !!r.triggersDisabled, 'data-test': 'repo-edit-triggers-disabled'});
  const box = errorBox('repo-edit-error');
  const submit = h('button', {type: 'submit', 'data-test': 'repo-edit-save'}, 'Save repository');
  const titleId = uid('repo-edit');
  const form = h('form', {'aria-labelledby': titleId, 'data-test': 'repo-edit-form'},
    h('h2', {id: titleId}, 'Edit'),
    field('Name', name), field('URL', url),
    field('Branch or tag', branch, "Empty: the remote's default branch."),
    field('Commit', commit, 'A pinned commit (40 hex digits), instead of a branch.'),
    field('Path', dir, 'The folder holding concord.yml; empty: the root.'),
    field('Credentials', secret),
    h('div', {class: 'field'}, h('label', {}, disabled, ' Disabled: starts no process')),
    h('div', {class: 'field'}, h('label', {}, triggersOff, ' Triggers disabled')),
    box.el, h('p', {}, submit));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, box, async () => {
      const body = {id: r.id, name: name.value.trim(), url: url.value.trim(),
        disabled: disabled.checked, triggersDisabled: triggersOff.checked};
      for (const [k, el] of [['branch', branch], ['commitId', commit], ['path', dir], ['secretName', secret]])
        if (el.value.trim()) body[k] = el.value.trim();
      await api('POST', '/api/v1/' + path('org', org, 'project', project, 'repository'), {json: body});
      flash(`Repository "${body.name}" saved: fetched, and its definition and triggers read.`);
      go('#/' + path('org', org, 'project', project, 'repo', body.name)); // the same address when not renamed
    });
  });
  return h('details', {class: 'panel', 'data-test': 'repo-edit-panel'}, h('summary', {}, 'Edit the repository'), form);
}
