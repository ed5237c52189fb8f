// #/process/{id} and #/process/{id}/{tab}: one process.  The header (status, stop, resume,
// pending forms) follows the status every 2 s until the process ends; the tabs are the
// details (initiator, project, repository and commit, times, meta, out variables), the
// live log, the events as a timeline, the Ansible runs (offered once the process has ANSIBLE
// events), attachments, children and checkpoints.
import {confirm} from '../lib/admin.js';
import {ansibleView, hasAnsible} from '../lib/ansible_view.js';
import {api, enc, ApiError} from '../lib/api.js';
import {h, mount, ready, when, duration} from '../lib/dom.js';
import {failureBanner, failureOf} from '../lib/failure.js';
import {logView} from '../lib/log_view.js';
import {explain} from '../lib/outcome.js';
import {poll} from '../lib/poll.js';
import {FINAL, STOPPABLE, statusBadge, setStatus} from '../lib/status.js';
import {timeline, UUID} from '../lib/timeline.js';

const TABS = [['', 'Details'], ['log', 'Log'], ['events', 'Events'], ['ansible', 'Ansible'], ['attachments', 'Attachments'],
  ['children', 'Children'], ['checkpoints', 'Checkpoints']];
const POLL_MS = 2000;
const RESTORABLE = new Set(['FINISHED', 'FAILED', 'CANCELLED', 'TIMED_OUT', 'SUSPENDED']);

function json(v) {
  return h('pre', {class: 'json'}, JSON.stringify(v, null, 2));
}

function facts(rows) {
  return h('dl', {class: 'facts'}, rows.filter((r) => r && r[1] !== undefined && r[1] !== null && r[1] !== '')
    .map(([k, v, id]) => [h('dt', {}, k), h('dd', {id: id || null}, v)]));
}

// What a SUSPENDED process waits for besides forms and events: process locks (its "waits").
function waitsOf(p) {
  const locks = (p.waits || []).filter((w) => w.type === 'PROCESS_LOCK');
  if (!locks.length) return null;
  return locks.map((w) => h('div', {'data-lock': w.name}, `lock '${w.name}' (${w.scope}) held by process `,
    w.instanceId ? h('a', {href: '#/process/' + enc(w.instanceId), class: 'mono'}, w.instanceId) : '(being handed over)'));
}

function details(p) {
  const meta = Object.assign({}, p.meta || {});
  const out = meta.out;
  delete meta.out;
  const commit = p.commitId ? [h('span', {class: 'mono', title: p.commitId}, p.commitId.slice(0, 12)),
    p.commitMsg ? ' ' + p.commitMsg.split('\n')[0] : '', p.commitAuthor ? h('span', {class: 'hint'}, ` — ${p.commitAuthor}`) : ''] : null;
  return [
    facts([
      ['Instance', h('span', {class: 'mono'}, p.instanceId)],
      ['Kind', p.kind],
      ['Organization', p.orgName ? h('a', {href: '#/org/' + enc(p.orgName)}, p.orgName) : null],
      ['Project', p.projectName ? h('a', {href: `#/org/${enc(p.orgName)}/project/${enc(p.projectName)}`}, p.projectName) : null, 'process-project'],
      ['Repository', p.repoName ? [p.repoName, p.repoUrl ? h('span', {class: 'hint'}, ` (${p.repoUrl}${p.repoPath ? ', ' + p.repoPath : ''})`) : ''] : null],
      ['Commit', commit],
      ['Initiator', p.initiator, 'process-initiator'],
      ['Waiting for', waitsOf(p), 'process-lock-waits'],
      ['Parent', p.parentInstanceId ? h('a', {href: '#/process/' + enc(p.parentInstanceId), class: 'mono'}, p.parentInstanceId) : null],
      ['Created', when(p.createdAt)],
      ['Start at', p.startAt ? when(p.startAt) : null],
      ['Last run', p.lastRunAt ? when(p.lastRunAt) : null],
      ['Last update', when(p.lastUpdatedAt)],
      ['Run time', p.totalRuntimeMs ? duration(p.totalRuntimeMs) : null],
      ['Tags', (p.tags || []).join(', ')],
      ['Handlers', (p.handlers || []).join(', ')],
      ['Timeout', p.timeout ? `${p.timeout} s` : null],
      ['Suspend timeout', p.suspendTimeout ? `${p.suspendTimeout} s` : null],
    ]),
    h('h2', {}, 'Out variables'),
    out && Object.keys(out).length ? h('div', {id: 'process-out'}, json(out)) : h('p', {class: 'hint', id: 'process-out'}, 'None.'),
    h('h2', {}, 'Meta'),
    Object.keys(meta).length ? h('div', {id: 'process-meta'}, json(meta)) : h('p', {class: 'hint', id: 'process-meta'}, 'None.'),
  ];
}

// Attachment names may hold '/': each segment encoded on its own.
function attachmentUrl(id, name) {
  return `/api/v1/process/${enc(id)}/attachment/` + name.split('/').map(enc).join('/');
}

// "myProject / deploy": what the process is, for its heading and the window's title.
function titleOf(p) {
  const what = [p.projectName, p.meta && p.meta.entryPoint].filter(Boolean);
  return what.length ? what.join(' / ') : 'Process';
}

export async function render(main, params, query) {
  const id = params.id;
  const tab = params.tab || '';
  if (!TABS.some(([t]) => t === tab)) throw new Error(`No tab "${tab}" (try log, events, ansible, attachments, children or checkpoints).`);
  const ctl = new AbortController();
  const base = '#/process/' + enc(id);
  // The log's tail is asked for together with the process (the first lines sooner).
  const logv = tab === 'log' ? logView(id, {signal: ctl.signal}) : null;
  const tail = logv ? logv.loadTail().then(() => null, (e) => e) : null;
  let proc;
  try {
    proc = await api('GET', '/api/v2/process/' + enc(id));
  } catch (e) {
    ctl.abort();
    throw e;
  }
  const statusEl = statusBadge(proc.status, {id: 'process-status'});
  const actions = h('div', {class: 'row actions', id: 'process-actions'});
  const actionMsg = h('div', {id: 'process-action-status', 'aria-live': 'polite'});
  const failureEl = h('div', {id: 'process-failure-box'});
  let failure = null;
  const panel = h('section', {id: 'process-tab-' + (tab || 'details'), class: 'tab-panel', 'aria-labelledby': 'tab-' + (tab || 'details')});
  const onStatus = []; // tab hooks called with each new record
  let actionKey = '';

  // Runs an action, then says what came of it: done (ok) and the new state, or why not.
  async function act(what, done, fn) {
    mount(actionMsg);
    try {
      await fn();
      mount(actionMsg, h('p', {class: 'notice ok', role: 'status', id: 'process-action-ok'}, done));
      actionKey = '';
      await refresh();
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return;
      mount(actionMsg, h('p', {class: 'notice error', role: 'alert', id: 'process-action-error', title: e.message || ''},
        explain(what, e)));
      actionKey = ''; // buttons enabled again
      await refresh().catch(() => drawActions());
    }
  }

  // The failure banner, once the process has failed (read once).
  async function drawFailure() {
    if (failure || (proc.status !== 'FAILED' && proc.status !== 'TIMED_OUT')) return;
    failure = await failureOf(proc);
    mount(failureEl, failureBanner(failure, (find) => `${base}/log?find=${enc(find)}`));
  }

  // Stop while it can change; for a suspended process its forms (the wizard) and the other
  // events it waits for (resume).
  async function drawActions() {
    let forms = [], waits = [], why = [];
    if (!FINAL.has(proc.status))
      // (a lock's wait is in the details, with its holder linked)
      why = (((await api('GET', `/api/v1/process/${enc(id)}/waits`).catch(() => null)) || {}).waits || [])
        .filter((w) => w.type !== 'PROCESS_LOCK');
    if (proc.status === 'SUSPENDED')
      [forms, waits] = await Promise.all([
        api('GET', `/api/v1/process/${enc(id)}/form`).catch(() => []),
        api('GET', `/api/v1/process/${enc(id)}/event?type=PROCESS_WAIT`).catch(() => [])]);
    const formNames = new Set(forms.map((f) => f.name));
    const formEvents = new Set([...formNames, ...forms.map((f) => f.formInstanceId)]);
    const last = waits.length ? waits[waits.length - 1].data || {} : {};
    for (const f of last.forms || []) formEvents.add((f && f.name) || f);
    // A lock's event is the server's to send: resumed by hand, the step fails without the lock.
    const lockWait = (proc.waits || []).some((w) => w.type === 'PROCESS_LOCK');
    const events = (last.eventNames || []).filter((ev) => !formEvents.has(ev) && !UUID.test(ev)
      && !(lockWait && ev.startsWith('lock-')));
    const key = JSON.stringify([proc.status, [...formNames], events, why.map((w) => w.reason)]);
    if (key === actionKey) return; // unchanged: keep the buttons (and the focus)
    actionKey = key;
    const items = [];
    if (STOPPABLE.has(proc.status))
      items.push(h('button', {type: 'button', class: 'danger', id: 'process-stop',
        onclick: () => confirm(actions, `Stop this process? It becomes CANCELLED: its flow stops at the current step and `
          + 'cannot be resumed (an onCancel flow runs if it has one).', 'Stop process',
        () => act('stop this process', 'Stop requested: the process is cancelled.', () => api('DELETE', '/api/v1/process/' + enc(id))))},
        'Stop'),
        h('button', {type: 'button', class: 'danger secondary', id: 'process-stop-cascade',
          onclick: () => confirm(actions, 'Stop this process and all its child processes (and theirs)? They become CANCELLED '
            + 'and cannot be resumed.', 'Stop with children',
          () => act('stop this process and its children', 'Stop requested: the process and its children are cancelled.',
            () => api('DELETE', `/api/v1/process/${enc(id)}/cascade`)))},
        'Stop with children'));
    if (FINAL.has(proc.status))
      items.push(h('button', {type: 'button', class: 'secondary', id: 'process-restart',
        onclick: () => confirm(actions, 'Restart this process? The first process of its tree runs again from its start, '
          + 'with the same id and arguments; its log is kept, its attachments are not.', 'Restart',
        () => act('restart this process', 'Restarted: the process runs again.',
          () => api('POST', `/api/v1/process/${enc(id)}/restart`)).then(startPolling))},
        'Restart'));
    if (why.length)
      items.push(h('ul', {class: 'hint process-waits', id: 'process-waits'},
        why.map((w) => h('li', {'data-type': w.type}, w.reason || w.type,
          ...(w.processes || []).map((pid) => [' ', h('a', {href: '#/process/' + enc(pid), class: 'mono'}, pid.slice(0, 8))])))));
    if (forms.length)
      items.push(h('a', {class: 'btn', href: base + '/wizard', id: 'process-wizard'}, 'Wizard'),
        ...forms.map((f) => h('a', {class: 'btn secondary', href: `${base}/form/${enc(f.name)}`, 'data-form': f.name}, `Form ${f.name}`)));
    for (const ev of events)
      items.push(h('button', {type: 'button', class: 'secondary', 'data-event': ev, id: 'process-resume-' + ev.replace(/[^A-Za-z0-9_-]/g, '_'),
        onclick: () => act(`resume the process with ${ev}`, `Resumed with ${ev}.`, () => api('POST', `/api/v1/process/${enc(id)}/resume/${enc(ev)}`, {json: {}}))}, `Resume ${ev}`));
    mount(actions, ...items);
  }

  // The Ansible tab is offered once the process has ANSIBLE events (looked for again while
  // it runs, until it has some).
  let ansibleSeen = tab === 'ansible';
  async function offerAnsible() {
    if (ansibleSeen || !(await hasAnsible(id))) return;
    ansibleSeen = true;
    main.querySelector('#tab-ansible').hidden = false;
  }

  async function refresh() {
    proc = await api('GET', '/api/v2/process/' + enc(id));
    setStatus(statusEl, proc.status);
    await drawActions();
    await drawFailure();
    await offerAnsible();
    for (const fn of onStatus) await fn(proc);
    return !FINAL.has(proc.status);
  }

  mount(main,
    h('p', {class: 'crumbs'}, h('a', {href: '#/processes'}, 'Processes')),
    h('div', {class: 'title-row'},
      h('h1', {id: 'process-title'}, titleOf(proc)), statusEl),
    h('p', {class: 'hint process-instance'}, 'Instance ', h('span', {class: 'mono', id: 'process-id'}, id)),
    failureEl, actions, actionMsg,
    h('nav', {class: 'tabs', 'aria-label': 'Process'},
      TABS.map(([t, label]) => h('a', {href: t ? `${base}/${t}` : base, id: 'tab-' + (t || 'details'),
        'aria-current': t === tab ? 'page' : null, hidden: t === 'ansible' && tab !== 'ansible'}, label))),
    panel);
  await Promise.all([drawActions(), drawFailure(), offerAnsible()]);

  let stopTab = null;
  switch (tab) {
  case '': {
    let shown = JSON.stringify(proc);
    mount(panel, details(proc));
    onStatus.push((p) => {
      const now = JSON.stringify(p);
      if (now !== shown) mount(panel, details(p));
      shown = now;
    });
    break;
  }
  case 'log': {
    const v = logv;
    mount(panel, v.el);
    const failed = await tail;
    if (failed) throw failed;
    v.shown(query && query.find);
    v.follow(async () => (FINAL.has(proc.status) ? proc.status
      : (proc = await api('GET', '/api/v2/process/' + enc(id), {signal: ctl.signal})).status))
      .catch((e) => { if (!ctl.signal.aborted) console.error(e); });
    stopTab = () => ctl.abort();
    break;
  }
  case 'events': {
    const t = timeline(id, query && query.pageSize);
    mount(panel, t.el);
    await t.refresh();
    if (failure) t.markFailure(failure);
    onStatus.push(async () => {
      await t.refresh();
      if (failure) t.markFailure(failure);
    });
    break;
  }
  case 'ansible': {
    const v = ansibleView(id);
    mount(panel, v.el);
    await v.refresh();
    onStatus.push(() => v.refresh());
    stopTab = v.stop;
    break;
  }
  case 'attachments': {
    const names = await api('GET', `/api/v1/process/${enc(id)}/attachment`);
    mount(panel, names.length
      ? h('ul', {id: 'attachments', class: 'plain'}, names.map((n) =>
        h('li', {}, h('a', {href: attachmentUrl(id, n), download: n.split('/').pop(), 'data-name': n}, n))))
      : h('p', {class: 'hint', id: 'attachments'}, 'No attachments. A process keeps the files it writes to _attachments/ in its working folder; they appear here to download.'));
    break;
  }
  case 'children': {
    const draw = (kids) => mount(panel, kids.length
      ? h('div', {class: 'table-wrap'}, h('table', {id: 'children', class: 'cards'},
        h('thead', {}, h('tr', {}, ['Instance', 'Status', 'Kind', 'Created', 'Tags'].map((x) => h('th', {scope: 'col'}, x)))),
        h('tbody', {}, kids.map((c) => h('tr', {'data-id': c.instanceId},
          h('td', {class: 'mono', 'data-label': 'Instance'}, h('a', {href: '#/process/' + enc(c.instanceId)}, c.instanceId)),
          h('td', {'data-label': 'Status'}, statusBadge(c.status)), h('td', {'data-label': 'Kind'}, c.kind || ''),
          h('td', {'data-label': 'Created'}, when(c.createdAt)),
          h('td', {'data-label': 'Tags'}, (c.tags || []).join(', ')))))))
      : h('p', {class: 'hint', id: 'children'}, 'No child processes. A flow starts them with the concord task (action: start).'));
    draw(await api('GET', `/api/v1/process/${enc(id)}/subprocess`));
    onStatus.push(async () => draw(await api('GET', `/api/v1/process/${enc(id)}/subprocess`)));
    break;
  }
  case 'checkpoints': {
    const draw = (cps) => mount(panel, cps.length
      ? h('div', {class: 'table-wrap'}, h('table', {id: 'checkpoints', class: 'cards'},
        h('thead', {}, h('tr', {}, ['Name', 'Created', ''].map((x) => h('th', {scope: 'col'}, x)))),
        h('tbody', {}, cps.map((c) => h('tr', {'data-id': c.id, 'data-name': c.name},
          h('td', {'data-label': 'Name'}, c.name), h('td', {'data-label': 'Created'}, when(c.createdAt)),
          h('td', {}, RESTORABLE.has(proc.status)
            ? h('button', {type: 'button', class: 'secondary', 'data-test': 'restore', 'aria-label': `Restore checkpoint ${c.name}`,
              onclick: (ev) => confirm(ev.target.parentNode, `Restore checkpoint "${c.name}"? The process runs again from `
                + 'there: the steps after it run again, with the variables as they were at the checkpoint.', 'Restore',
              () => act(`restore checkpoint "${c.name}"`, `Restored from checkpoint "${c.name}": the process runs again.`,
                () => api('POST', `/api/v1/process/${enc(id)}/checkpoint/restore`, {json: {id: c.id}})).then(startPolling))},
            'Restore')
            : h('span', {class: 'hint'}, 'running')))))))
      : h('p', {class: 'hint', id: 'checkpoints'}, 'No checkpoints. A flow records one with a checkpoint step; it can then be restored from here.'));
    draw(await api('GET', `/api/v1/process/${enc(id)}/checkpoint`));
    onStatus.push(async () => draw(await api('GET', `/api/v1/process/${enc(id)}/checkpoint`)));
    break;
  }
  }
  ready(main, 'process', `${titleOf(proc)} · ${id.slice(0, 8)}`);

  // Follows the status while the process can change; a restore starts it again.
  let stopPoll = null, polling = false;
  function startPolling() {
    if (polling || FINAL.has(proc.status)) return;
    polling = true;
    let first = true;
    stopPoll = poll(async () => {
      if (first) { // poll() calls at once: the page was just drawn
        first = false;
        return true;
      }
      const more = await refresh();
      if (!more) polling = false;
      return more;
    }, POLL_MS);
  }
  startPolling();
  return () => {
    if (stopPoll) stopPoll();
    if (stopTab) stopTab();
    ctl.abort();
  };
}
