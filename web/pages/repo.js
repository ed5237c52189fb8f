// #/org/{org}/project/{project}/repo/{repo} — a repository: its details, a refresh, a
// validate and an edit (repo_edit.js), a form starting a process from it (entry point and
// profiles picked from its definition, arguments), and its triggers (manual ones with a button that starts them).
import {api, qs} from '../lib/api.js';
import {h, mount} from '../lib/dom.js';
import {flash} from '../lib/flash.js';
import {busy, copyButton, crumbs, deletePanel, details, errorBox, field, loadPage, path, select, table} from '../lib/admin.js';
import {kvEditor} from '../lib/kveditor.js';
import {editPanel, validatePanel} from './repo_edit.js';

export async function render(main, params) {
  const {org, project, repo} = params;
  const apiBase = '/api/v1/' + path('org', org, 'project', project, 'repository', repo);
  await loadPage(main, 'repo', `${repo} · ${project}`, async () => {
    main.append(crumbs(['Organizations', '#/orgs'], [org, '#/' + path('org', org)],
      [project, '#/' + path('org', org, 'project', project)], [repo]), h('h1', {}, repo));
    const r = await api('GET', apiBase);
    main.append(details('repo-details', [
      ['URL', h('span', {class: 'mono'}, r.url)],
      ['Branch or tag', r.branch || (r.commitId ? '' : "the remote's default branch")],
      ['Pinned commit', r.commitId && h('span', {class: 'mono'}, r.commitId)],
      ['Path', r.path],
      ['Credentials', r.secretName && h('a', {href: '#/' + path('org', org, 'secret', r.secretName)}, r.secretName)],
      ['Disabled', r.disabled ? 'yes: starts nothing' : ''],
      ['Triggers disabled', r.triggersDisabled ? 'yes' : ''],
    ]));
    const triggers = h('div', {'data-test': 'triggers-holder'});
    main.append(refreshPanel(apiBase, () => showTriggers(triggers, params, apiBase)), validatePanel(apiBase),
      await editPanel(org, project, r));
    main.append(await startForm(params, r, apiBase));
    main.append(h('h2', {}, 'Triggers'), triggers);
    await showTriggers(triggers, params, apiBase);
    main.append(deletePanel('repo-delete', 'Delete repository', `Delete the repository "${repo}"? Its triggers go with it.`,
      async () => {
        await api('DELETE', apiBase);
        flash(`Repository "${repo}" deleted, with its triggers.`);
        location.hash = '#/' + path('org', org, 'project', project);
      }));
  });
}

function refreshPanel(apiBase, reload) {
  const box = errorBox('refresh-result');
  const btn = h('button', {type: 'button', class: 'secondary', 'data-test': 'repo-refresh'}, 'Refresh');
  btn.addEventListener('click', () => busy(btn, box, async () => {
    await api('POST', apiBase + '/refresh');
    box.ok('Refreshed: fetched again and triggers re-read.');
    await reload();
  }));
  return h('div', {class: 'panel'},
    h('p', {class: 'hint'}, 'Fetch the repository now and read its triggers again.'), btn, box.el);
}

// Starts a process from the repository: POST /api/v1/process (multipart) with org,
// project, repo, and the typed arguments in the JSON part `request`.
async function start(params, opts) {
  const fd = new FormData();
  fd.append('org', params.org);
  fd.append('project', params.project);
  fd.append('repo', params.repo);
  if (opts.entryPoint) fd.append('entryPoint', opts.entryPoint);
  if (opts.activeProfiles && opts.activeProfiles.length) fd.append('activeProfiles', opts.activeProfiles.join(','));
  if (opts.branch) fd.append('repoBranchOrTag', opts.branch);
  if (opts.arguments && Object.keys(opts.arguments).length)
    fd.append('request', new Blob([JSON.stringify({arguments: opts.arguments})], {type: 'application/json'}), 'request.json');
  const res = await api('POST', '/api/v1/process', {body: fd});
  location.hash = '#/process/' + encodeURIComponent(res.instanceId);
}

function profiles(text) {
  return text.split(',').map((s) => s.trim()).filter(Boolean);
}

// The entry point and profile choices of the definition at the branch asked for
// (GET …/repository/{repo}/definition): a drop-down of the entry points, a box per
// profile, and the declared arguments as rows typed by their values.  When the definition
// cannot be read (git, a definition that does not load), its error is shown and both are
// typed as text instead.
function choices(apiBase, args) {
  const entryHolder = h('div', {});
  const profHolder = h('div', {});
  const box = errorBox('start-definition-error');
  let entry = null;
  let prof = null;
  const text = (name, test, placeholder) => h('input', {type: 'text', name, 'data-test': test, autocomplete: 'off', placeholder});
  function draw(d) {
    if (d) {
      entry = select({name: 'entryPoint', 'data-test': 'start-entry'}, d.entryPoints, d.defaultEntryPoint);
      if (!d.entryPoints.length) entry.append(h('option', {value: ''}, 'default (the definition has no flows)'));
      prof = d.profiles.length ? h('fieldset', {'data-test': 'start-profiles', class: 'choices'}, h('legend', {}, 'Active profiles'),
        d.profiles.map((p) => h('label', {class: 'choice'},
          h('input', {type: 'checkbox', value: p, 'data-test': 'start-profile'}), ' ' + p)),
        h('p', {class: 'hint'}, 'None ticked: ' + (d.activeProfiles.length ? d.activeProfiles.join(', ') : 'default') +
          ' (the configuration\'s activeProfiles).'))
        : h('p', {class: 'hint', 'data-test': 'start-profiles-none'}, 'The definition declares no profiles.');
      mount(entryHolder, field('Entry point', entry, `The flow to run; from commit ${d.commitId.slice(0, 12)}.`));
      mount(profHolder, prof);
      args.declare(d.arguments || []);
    } else {
      entry = text('entryPoint', 'start-entry', 'default');
      prof = text('activeProfiles', 'start-profiles');
      mount(entryHolder, field('Entry point', entry, 'The flow to run; empty: the configuration\'s entryPoint, else "default".'));
      mount(profHolder, field('Active profiles', prof, 'Comma-separated, e.g. "dev,eu".'));
      args.declare([]);
    }
  }
  async function load(branch) {
    box.clear();
    try {
      draw(await api('GET', apiBase + '/definition' + qs({repoBranchOrTag: branch})));
    } catch (e) {
      box.show(e);
      draw(null);
    }
  }
  return {
    load,
    entryEl: entryHolder, profEl: profHolder, errorEl: box.el,
    entry: () => (entry ? entry.value.trim() : ''),
    profiles: () => (!prof ? [] : prof.tagName === 'INPUT' ? profiles(prof.value)
      : [...prof.querySelectorAll('input:checked')].map((i) => i.value)),
  };
}

async function startForm(params, r, apiBase) {
  const branch = h('input', {type: 'text', name: 'repoBranchOrTag', 'data-test': 'start-branch', autocomplete: 'off',
    placeholder: r.commitId ? r.commitId.slice(0, 12) : r.branch || ''});
  const args = kvEditor('start-args');
  const pick = choices(apiBase, args);
  const box = errorBox('start-error');
  const submit = h('button', {type: 'submit', 'data-test': 'start-submit', disabled: r.disabled}, 'Start process');
  const form = h('form', {'data-test': 'start-form', 'aria-labelledby': 'start-title'},
    h('h2', {id: 'start-title'}, 'Start a process'),
    field('Branch or tag', branch, 'Empty: the repository\'s configured branch or commit. The choices below follow it.'),
    pick.errorEl, pick.entryEl, pick.profEl, args.el, box.el, h('p', {}, submit));
  const link = startLink(params, pick, args);
  for (const type of ['input', 'change', 'click']) form.addEventListener(type, link.update);
  branch.addEventListener('change', async () => {
    await pick.load(branch.value.trim());
    link.update();
  });
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, box, () => start(params, {
      entryPoint: pick.entry(),
      activeProfiles: pick.profiles(),
      branch: branch.value.trim(),
      arguments: args.value(),
    }));
  });
  await pick.load('');
  link.update();
  return h('div', {class: 'panel'}, form, link.el);
}

// The start link of what the form says (GET …/repo/{repo}/start/{entryPoint}): whoever
// opens it logs in if needed and starts the process as themselves.
function startLink(params, pick, args) {
  const out = h('input', {type: 'text', readonly: true, class: 'mono', 'data-test': 'start-link', spellcheck: 'false'});
  const update = () => {
    const q = new URLSearchParams();
    const p = pick.profiles();
    if (p.length) q.set('activeProfiles', p.join(','));
    for (const {name, text} of args.pairs()) if (name) q.append('arguments.' + name, text);
    const s = q.toString();
    out.value = `${location.origin}/api/v1/${path('org', params.org, 'project', params.project, 'repo', params.repo, 'start',
      pick.entry() || 'default')}${s ? '?' + s : ''}`;
  };
  return {
    update,
    el: h('div', {},
      field('Start link', out, 'The same start as a link to share: it opens the console (after a login if needed) and ' +
        'starts the process as whoever opens it. Its arguments are text; the branch is not part of it.'),
      copyButton(out, 'start-link-copy', 'link')),
  };
}

async function showTriggers(holder, params, apiBase) {
  const list = await api('GET', apiBase + '/trigger');
  const box = errorBox('trigger-error');
  const rows = list.map((t) => {
    const cfg = t.cfg || {};
    const run = h('button', {type: 'button', 'data-test': 'trigger-run', 'data-trigger': t.id}, 'Run');
    run.addEventListener('click', () => busy(run, box, () => start(params, {
      entryPoint: cfg.entryPoint,
      activeProfiles: t.activeProfiles || [],
      arguments: t.arguments || {},
    })));
    return [
      t.eventSource,
      cfg.name || cfg.spec || '',
      h('span', {class: 'mono'}, cfg.entryPoint || ''),
      (t.activeProfiles || []).join(', '),
      Object.keys(t.arguments || {}).length ? h('code', {}, JSON.stringify(t.arguments)) : '',
      t.eventSource === 'manual' ? run : '',
    ];
  });
  mount(holder, table('triggers', ['Kind', 'Name or schedule', 'Entry point', 'Profiles', 'Arguments', ''], rows,
    'No trigger: the definition has no triggers: section, or it has not been read yet (refresh).'), box.el);
}
