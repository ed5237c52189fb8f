// A process's Ansible runs (the process page's Ansible tab): its hosts by outcome with a
// count per outcome (GET …/ansible/hosts: each host's worst outcome over its tasks), the
// hosts worst first in a table drawn a window at a time (lib/row_window.js: a playbook over
// thousands of hosts opens as fast as one over three), a filter per outcome, and a host's
// tasks with their status and duration (GET …/ansible/events?host=) once its name is
// clicked.  refresh() reads it all again; the page calls it while the process runs.
import {api, enc} from './api.js';
import {h, mount, duration, testid} from './dom.js';
import {rowWindow} from './row_window.js';

// Worst first: the order of the hosts and of the counts.
const OUTCOMES = ['FAILED', 'UNREACHABLE', 'RUNNING', 'CHANGED', 'OK', 'SKIPPED'];
const PAGE = 1000; // the server's largest page of hosts
const COLS = 4;

const rank = (s) => {
  const i = OUTCOMES.indexOf(s);
  return i < 0 ? OUTCOMES.length : i;
};

function outcome(status) {
  return h('span', {class: 'ansible-status ' + status, 'data-test': 'ansible-status'}, status);
}

// Every host, however many pages the server splits them into.
async function allHosts(pid) {
  const hosts = [];
  for (let offset = 0; ; offset += PAGE) {
    const r = await api('GET', `/api/v1/process/${enc(pid)}/ansible/hosts?limit=${PAGE}&offset=${offset}`);
    hosts.push(...(r.items || []));
    if ((r.items || []).length < PAGE) return hosts;
  }
}

// A host's tasks in the order they started: each task's start (phase pre) and end (post)
// events are one row, paired by correlationId (host + task); a task with no end yet runs.
function tasksOf(events) {
  const byId = new Map(), rows = [];
  for (const ev of events) {
    const d = ev.data || {};
    const key = d.correlationId || `${d.playbookId}/${d.taskId}/${ev.seqId}`;
    let t = byId.get(key);
    if (!t || (d.phase === 'pre' && t.done)) { // a task run again (a loop of plays) is a new row
      t = {task: d.task || d.action || '?', action: d.action || '', playbook: d.playbook || '', status: 'RUNNING',
        duration: null, handler: !!d.isHandler, done: false};
      byId.set(key, t);
      rows.push(t);
    }
    if (d.phase !== 'pre') {
      t.status = d.status === 'FAILED' && d.ignore_errors ? 'FAILED (ignored)' : d.status;
      t.duration = d.duration;
      t.done = true;
    }
  }
  return rows;
}

export function ansibleView(pid) {
  let hosts = [], shown = [], filter = '', selected = null;
  const rows = new Map(); // host → {tr, status, group, dur}
  const counts = h('div', {class: 'ansible-counts row', role: 'group', 'aria-label': 'Hosts by outcome', id: 'ansible-counts'});
  const tbody = h('tbody', {id: 'ansible-host-rows'});
  const table = h('table', {id: 'ansible-hosts', class: 'list'},
    h('caption', {class: 'sr-only'}, 'Hosts, failed first; a host name shows its tasks'),
    h('thead', {}, h('tr', {'aria-rowindex': '1'}, ['Host', 'Group', 'Outcome', 'Time'].map((t) => h('th', {scope: 'col'}, t)))),
    tbody);
  const tasks = h('section', {id: 'ansible-host-tasks', class: 'ansible-tasks', 'aria-live': 'polite', hidden: true});
  const msg = h('div', {id: 'ansible-status-msg', 'aria-live': 'polite'});
  const win = rowWindow(table, tbody, COLS, rowAt);
  // the host's tasks above the hosts: in reach however far down the list the host was
  const el = h('div', {id: 'ansible'}, counts, msg, tasks, h('div', {class: 'table-wrap'}, table));

  function makeRow(x) {
    const r = {status: h('td', {}), group: h('td', {}, x.hostGroup || ''), dur: h('td', testid('ansible-duration')), key: ''};
    r.tr = h('tr', {'data-host': x.host},
      h('td', {}, h('button', {type: 'button', class: 'link', 'data-test': 'ansible-host',
        onclick: () => select(x.host).catch((e) => console.error(e))}, x.host)),
      r.group, r.status, r.dur);
    return r;
  }

  function patchRow(r, x) {
    const key = `${x.status}/${x.duration}/${x.hostGroup}`;
    if (key === r.key) return;
    r.key = key;
    r.tr.dataset.status = x.status;
    mount(r.status, outcome(x.status));
    mount(r.dur, duration(x.duration));
    r.group.textContent = x.hostGroup || '';
  }

  function rowAt(i) {
    const x = shown[i];
    let r = rows.get(x.host);
    if (!r) rows.set(x.host, (r = makeRow(x)));
    patchRow(r, x);
    r.tr.classList.toggle('selected', x.host === selected);
    return r.tr;
  }

  // One chip per outcome (and all hosts), made once and updated in place: a focused chip
  // keeps the focus while the counts change.
  const chips = ['', ...OUTCOMES].map((status) => {
    const count = h('span', {class: 'count'}, '0');
    const el = h('button', {type: 'button', class: 'chip ' + (status || 'ALL'), 'data-test': 'ansible-count',
      'data-status': status || 'ALL', onclick: () => { filter = status; drawCounts(); drawHosts(); }},
    status ? status.toLowerCase() : 'All hosts', ' ', count);
    return {status, el, count};
  });
  mount(counts, chips.map((c) => c.el));

  function drawCounts() {
    const n = {'': hosts.length};
    for (const x of hosts) n[x.status] = (n[x.status] || 0) + 1;
    for (const c of chips) {
      c.count.textContent = String(n[c.status] || 0);
      c.el.setAttribute('aria-pressed', String(filter === c.status));
      c.el.hidden = c.status === 'RUNNING' && !n.RUNNING && filter !== 'RUNNING';
    }
  }

  function drawHosts() {
    shown = hosts.filter((x) => !filter || x.status === filter)
      .sort((a, b) => rank(a.status) - rank(b.status) || a.host.localeCompare(b.host));
    win.set(shown.length);
    mount(msg, hosts.length ? (shown.length ? null
      : h('p', {class: 'hint', 'data-test': 'ansible-none'}, `No host is ${filter.toLowerCase()}.`))
      : h('p', {class: 'hint', 'data-test': 'ansible-none'}, 'No Ansible events yet: the hosts appear as the playbook reaches them.'));
  }

  // fresh: the user just picked the host (the tasks are brought into view, focus on them).
  async function drawTasks(fresh) {
    if (!selected) return;
    const host = selected;
    const events = await api('GET', `/api/v1/process/${enc(pid)}/ansible/events?host=${enc(host)}`);
    if (host !== selected) return;
    const list = tasksOf(events);
    tasks.hidden = false;
    mount(tasks,
      h('h2', {id: 'ansible-tasks-title', tabindex: '-1'}, `Tasks on ${host}`),
      h('div', {class: 'table-wrap'}, h('table', {class: 'list', id: 'ansible-tasks', 'data-host': host, 'aria-labelledby': 'ansible-tasks-title'},
        h('thead', {}, h('tr', {}, ['Task', 'Module', 'Outcome', 'Time', 'Playbook'].map((t) => h('th', {scope: 'col'}, t)))),
        h('tbody', {}, list.map((t) => h('tr', {'data-test': 'ansible-task', 'data-status': t.status},
          h('td', {'data-test': 'ansible-task-name'}, t.task, t.handler ? h('span', {class: 'hint'}, ' (handler)') : null),
          h('td', {class: 'mono'}, t.action), h('td', {}, outcome(t.status)),
          h('td', testid('ansible-task-duration'), t.duration === null ? '' : duration(t.duration)),
          h('td', {}, t.playbook)))))));
    if (fresh) {
      tasks.scrollIntoView({block: 'nearest'});
      tasks.querySelector('h2').focus({preventScroll: true});
    }
  }

  function select(host) {
    selected = host;
    for (const [name, r] of rows) r.tr.classList.toggle('selected', name === host);
    return drawTasks(true);
  }

  return {
    el,
    async refresh() {
      hosts = await allHosts(pid);
      drawCounts();
      drawHosts();
      await drawTasks();
    },
    stop: () => win.stop(),
  };
}

// Whether the process has ANSIBLE events (the tab is offered only then).
export async function hasAnsible(pid) {
  const evs = await api('GET', `/api/v1/process/${enc(pid)}/event?type=ANSIBLE&limit=1`).catch(() => []);
  return evs.length > 0;
}
