// #/policy/{name} — one policy: its rules document laid out to read, where it is linked.
// Administrators also edit the rules and the parent (Save: the server validates the
// document and names what it refuses), link it to the server, an organization, a project
// or a user, unlink it, and delete it after a confirmation.  Global readers read.
import {api, qs} from '../lib/api.js';
import {h, mount} from '../lib/dom.js';
import {flash} from '../lib/flash.js';
import {session} from '../lib/session.js';
import {busy, crumbs, deletePanel, errorBox, field, loadPage, path, table} from '../lib/admin.js';
import {isAdmin} from '../lib/roles.js';
import {parentSelect, placeText, rulesBox} from '../lib/policy_parts.js';

export async function render(main, params) {
  const {name} = params;
  const apiBase = '/api/v2/' + path('policy', name);
  await loadPage(main, 'policy', `${name} · policies`, async () => {
    main.append(crumbs(['Policies', '#/policies'], [name]), h('h1', {}, name));
    const [policy, all] = await Promise.all([api('GET', apiBase), api('GET', '/api/v2/policy')]);
    const admin = isAdmin(session.user);
    const linksHolder = h('div', {'data-test': 'policy-links-holder'});
    const linksBox = errorBox('policy-links-result');
    const drawLinks = async (fresh) => {
      const me = (fresh || await api('GET', '/api/v2/policy')).find((p) => p.name === name) || {links: []};
      mount(linksHolder, linksTable(apiBase, me.links || [], admin, linksBox, drawLinks));
    };
    await drawLinks(all);
    if (!admin) {
      const parent = all.find((p) => p.id === policy.parentId);
      main.append(h('div', {class: 'panel'}, h('h2', {}, 'Rules'),
        parent ? h('p', {}, 'Parent: ', h('a', {href: '#/' + path('policy', parent.name)}, parent.name)) : null,
        h('pre', {class: 'mono', 'data-test': 'policy-rules-text'}, JSON.stringify(policy.rules, null, 2))),
      h('div', {class: 'panel'}, h('h2', {}, 'Linked to'), linksHolder),
      h('p', {class: 'hint', 'data-test': 'policy-read-only'}, 'Only administrators change policies.'));
      return;
    }
    main.append(editForm(policy, all), h('div', {class: 'panel'}, h('h2', {}, 'Linked to'), linksHolder, linksBox.el,
      linkForm(apiBase, linksBox, drawLinks)),
    deletePanel('policy-delete', 'Delete policy', `Delete the policy "${name}" and its links? Its children lose their parent.`, async () => {
      await api('DELETE', apiBase);
      flash(`Policy "${name}" deleted.`);
      location.hash = '#/policies';
    }));
  });
}

function editForm(policy, all) {
  const parent = parentSelect(all, policy.name, policy.parentId || '');
  const rules = rulesBox(policy.rules);
  const box = errorBox('policy-save-result');
  const submit = h('button', {type: 'submit', 'data-test': 'policy-save'}, 'Save');
  const form = h('form', {class: 'panel', 'data-test': 'policy-edit-form'}, h('h2', {}, 'Rules'), parent, rules,
    box.el, h('p', {}, submit));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, box, async () => {
      const body = {name: policy.name, rules: rules.rules()};
      const parentId = parent.querySelector('select').value;
      if (parentId) body.parentId = parentId;
      await api('POST', '/api/v2/policy', {json: body});
      box.ok('Saved.');
    });
  });
  return form;
}

function linksTable(apiBase, links, admin, box, redraw) {
  const rows = links.map((l) => {
    const place = h('span', {'data-test': 'policy-place'}, placeText(l));
    if (!admin) return [place];
    const unlink = h('button', {type: 'button', class: 'secondary', 'data-test': 'policy-unlink',
      'aria-label': `Unlink from ${placeText(l)}`}, 'Unlink');
    unlink.addEventListener('click', () => busy(unlink, box, async () => {
      await api('DELETE', apiBase + '/link' + qs({orgName: l.orgName, projectName: l.projectName, userName: l.userName}));
      await redraw();
      box.ok(`Unlinked from ${placeText(l)}.`);
    }));
    return [place, unlink];
  });
  return table('policy-places', admin ? ['Place', ''] : ['Place'], rows, 'Not linked: it applies nowhere yet.');
}

// Links to a place: all boxes empty is the server; an organization, a project of it, a
// user, or a user within an organization or a project.  One policy per place: linking
// replaces the place's previous one.
function linkForm(apiBase, box, redraw) {
  const input = (test) => h('input', {type: 'text', autocomplete: 'off', spellcheck: 'false', 'data-test': test});
  const org = input('link-org'), project = input('link-project'), user = input('link-user');
  const submit = h('button', {type: 'submit', 'data-test': 'policy-link-add'}, 'Link');
  const form = h('form', {'data-test': 'policy-link-form'},
    h('h3', {}, 'Link to a place'),
    h('p', {class: 'hint'}, 'All empty: the server. A place has one policy: linking replaces the one it had.'),
    h('div', {class: 'row'}, field('Organization', org), field('Project (of that organization)', project), field('User', user)),
    h('p', {}, submit));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, box, async () => {
      const place = {orgName: org.value.trim(), projectName: project.value.trim(), userName: user.value.trim()};
      await api('PUT', apiBase + '/link', {json: Object.fromEntries(Object.entries(place).filter(([, v]) => v))});
      await redraw();
      box.ok(`Linked to ${placeText(place)}.`);
      org.value = project.value = user.value = '';
    });
  });
  return form;
}
