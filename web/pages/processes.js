// #/processes?org=&project=&status=&initiator=&tags=&flow=&minDuration=&offset=&limit=: the process list,
// newest first.  The filters live in the URL (back, forward and reload keep them).  Only
// the rows near the viewport are in the DOM (lib/row_window.js): a page of 1,000 costs
// about what a page of 60 does.  While the tab is visible the list is asked for again
// every 2 s and the rows are patched in place: a row is built once per process, when it
// first comes into view, later only the cells that changed are touched.
import {confirm} from '../lib/admin.js';
import {api, qs, enc} from '../lib/api.js';
import {h, mount, notice, ready, when, duration} from '../lib/dom.js';
import {poll} from '../lib/poll.js';
import {rowWindow} from '../lib/row_window.js';
import {FINAL, statusBadge, setStatus} from '../lib/status.js';

const STATUSES = ['NEW', 'PREPARING', 'ENQUEUED', 'WAITING', 'STARTING', 'RUNNING', 'SUSPENDED', 'RESUMING',
  'FINISHED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];
const LIMITS = [30, 50, 100, 500, 1000];
const POLL_MS = 2000;
const COLUMNS = [['Instance'], ['Status'], ['Project', 'col-project'], ['Flow', 'col-flow'], ['Initiator'],
  ['Created', 'col-created'], ['Duration', 'col-duration'], ['Updated', 'col-wide'], ['Tags', 'col-wide']];
// "longer than" choices of the duration filter: [minutes, label]
const DURATIONS = [[1, '1 min'], [5, '5 min'], [15, '15 min'], [60, '1 hour'], [240, '4 hours']];

function apiQuery(q) {
  const p = new URLSearchParams();
  if (q.org) p.set('orgName', q.org);
  if (q.project) p.set('projectName', q.project);
  if (q.status) p.set('status', q.status);
  if (q.initiator) p.set('initiator', q.initiator);
  if (q.flow) p.set('entryPoint', q.flow);
  if (minutesOf(q)) p.set('minRuntimeMs', String(minutesOf(q) * 60000));
  for (const t of (q.tags || '').split(',').map((s) => s.trim()).filter(Boolean)) p.append('tags', t);
  p.set('limit', String(limitOf(q)));
  p.set('offset', String(offsetOf(q)));
  return '?' + p.toString();
}

function limitOf(q) {
  const n = parseInt(q.limit, 10);
  return n >= 1 && n <= 1000 ? n : 30;
}

function minutesOf(q) {
  const n = parseInt(q.minDuration, 10);
  return DURATIONS.some(([m]) => m === n) ? n : 0;
}

function offsetOf(q) {
  const n = parseInt(q.offset, 10);
  return n > 0 ? n : 0;
}

function hashFor(q) {
  return '#/processes' + qs(q);
}

// The shape of a row, built once; each row is a deep clone of it (much cheaper than
// building 1,000 rows element by element), its cells then filled in.
let protoRow = null;

function proto() {
  if (!protoRow)
    protoRow = h('tr', {'data-test': 'process-row'},
      h('td', {class: 'mono', 'data-label': 'Instance'},
        h('input', {type: 'checkbox', class: 'row-select', 'data-test': 'process-select'}), ' ', h('a', {'data-test': 'process-link'})),
      h('td', {'data-label': 'Status'}, statusBadge('', {'data-test': 'status'})),
      h('td', {class: 'col-project', 'data-label': 'Project'}),
      h('td', {class: 'col-flow', 'data-test': 'flow', 'data-label': 'Flow'}),
      h('td', {'data-test': 'initiator', 'data-label': 'Initiator'}),
      h('td', {class: 'col-created time', 'data-label': 'Created'}),
      h('td', {class: 'col-duration time', 'data-test': 'duration', 'data-label': 'Duration'}),
      h('td', {class: 'col-wide time', 'data-label': 'Updated'}),
      h('td', {class: 'col-wide', 'data-label': 'Tags'}));
  return protoRow;
}

// "2026-11-23 18:04:05" in the browser's time zone, the ISO text as its title.
function setTime(td, iso) {
  const t = when(iso);
  td.textContent = t && t.textContent !== undefined ? t.textContent : String(t || '');
  td.title = iso || '';
}

// One row, its cells kept for patching.
function makeRow(p) {
  const tr = proto().cloneNode(true);
  const td = tr.children;
  tr.dataset.id = p.instanceId;
  td[0].firstChild.setAttribute('aria-label', 'Select process ' + p.instanceId);
  const a = td[0].lastChild;
  a.href = '#/process/' + enc(p.instanceId);
  a.title = p.instanceId;
  a.setAttribute('aria-label', 'Process ' + p.instanceId);
  a.textContent = p.instanceId.slice(0, 8);
  setTime(td[5], p.createdAt);
  const cells = {status: td[1].firstChild, project: td[2], flow: td[3], initiator: td[4], duration: td[6], updated: td[7],
    tags: td[8]};
  const row = {tr, cells, data: {}};
  patchRow(row, p);
  return row;
}

function text(el, value) {
  if (el.textContent !== value) el.textContent = value;
}

function patchRow(row, p) {
  const old = row.data;
  setStatus(row.cells.status, p.status);
  const project = [p.orgName, p.projectName].filter(Boolean).join(' / ');
  text(row.cells.project, project);
  text(row.cells.flow, (p.meta && p.meta.entryPoint) || '');
  text(row.cells.initiator, p.initiator || '');
  text(row.cells.duration, runTime(p));
  if (old.lastUpdatedAt !== p.lastUpdatedAt) setTime(row.cells.updated, p.lastUpdatedAt);
  text(row.cells.tags, (p.tags || []).join(', '));
  row.data = p;
}

// How long it ran: its run time once final, else since it last started running.
function runTime(p) {
  if (p.totalRuntimeMs && FINAL.has(p.status)) return duration(p.totalRuntimeMs);
  if (p.status === 'RUNNING' && p.lastRunAt) return duration((p.totalRuntimeMs || 0) + Math.max(0, Date.now() - new Date(p.lastRunAt)));
  return p.totalRuntimeMs ? duration(p.totalRuntimeMs) : '';
}

function filterForm(q) {
  const field = (name, label, input) => h('div', {class: 'filter'}, h('label', {for: 'filter-' + name}, label), input);
  const org = h('input', {id: 'filter-org', name: 'org', value: q.org || '', autocomplete: 'off'});
  const project = h('input', {id: 'filter-project', name: 'project', value: q.project || '', autocomplete: 'off'});
  const status = h('select', {id: 'filter-status', name: 'status'},
    h('option', {value: ''}, 'any'),
    STATUSES.map((s) => h('option', {value: s, selected: q.status === s}, s)));
  const initiator = h('input', {id: 'filter-initiator', name: 'initiator', value: q.initiator || '', autocomplete: 'off'});
  const tags = h('input', {id: 'filter-tags', name: 'tags', value: q.tags || '', placeholder: 'a, b', autocomplete: 'off'});
  const flow = h('input', {id: 'filter-flow', name: 'flow', value: q.flow || '', placeholder: 'entry point', autocomplete: 'off'});
  const minDuration = h('select', {id: 'filter-duration', name: 'minDuration'},
    h('option', {value: ''}, 'any'),
    DURATIONS.map(([m, label]) => h('option', {value: m, selected: minutesOf(q) === m}, `longer than ${label}`)));
  const limit = h('select', {id: 'filter-limit', name: 'limit'},
    LIMITS.map((n) => h('option', {value: n, selected: limitOf(q) === n}, String(n))));
  function submit(ev) {
    ev.preventDefault();
    location.hash = hashFor({org: org.value.trim(), project: project.value.trim(), status: status.value,
      initiator: initiator.value.trim(), tags: tags.value.trim(), flow: flow.value.trim(), minDuration: minDuration.value,
      limit: limit.value === '30' ? '' : limit.value});
  }
  return h('form', {class: 'filters row', id: 'process-filters', onsubmit: submit, role: 'search'},
    field('org', 'Organization', org), field('project', 'Project', project), field('status', 'Status', status),
    field('flow', 'Flow', flow), field('duration', 'Duration', minDuration),
    field('initiator', 'Initiator', initiator), field('tags', 'Tags', tags), field('limit', 'Per page', limit),
    h('div', {class: 'filter'}, h('button', {type: 'submit', id: 'filter-apply'}, 'Filter')),
    h('div', {class: 'filter'}, h('a', {class: 'btn secondary', href: '#/processes', id: 'filter-clear'}, 'Clear')));
}

export async function render(main, params, query) {
  const limit = limitOf(query), offset = offsetOf(query);
  const tbody = h('tbody', {id: 'process-rows'});
  const table = h('table', {id: 'process-list', class: 'list'},
    h('caption', {class: 'sr-only'}, 'Processes, newest first'),
    h('thead', {}, h('tr', {'aria-rowindex': '1'}, COLUMNS.map(([t, c]) => h('th', {scope: 'col', class: c}, t)))),
    tbody);
  const msg = h('div', {id: 'process-list-status', 'aria-live': 'polite'});
  const path = '/api/v2/process' + apiQuery(query);
  const pager = h('nav', {class: 'pager row', 'aria-label': 'Pages'});
  const rows = new Map(); // instanceId → row, for the processes that have been in view
  let shown = [];
  const selected = new Set(); // instanceIds ticked for a bulk stop
  const bulkMsg = h('div', {id: 'process-bulk-status', 'aria-live': 'polite'});
  const bulkBtn = h('button', {type: 'button', class: 'danger', id: 'process-bulk-stop', disabled: true,
    onclick: () => confirm(bulkHolder, `Cancel ${selected.size} selected process(es)? They become CANCELLED and cannot `
      + 'be resumed.', 'Cancel processes', bulkStop)}, 'Cancel selected');
  const bulkHolder = h('div', {class: 'row bulk-actions'}, bulkBtn);

  function drawBulk() {
    for (const id of [...selected]) if (!rows.has(id)) selected.delete(id);
    bulkBtn.disabled = selected.size === 0;
    bulkBtn.textContent = selected.size ? `Cancel selected (${selected.size})` : 'Cancel selected';
  }

  // DELETE /api/v1/process/bulk: what could not be stopped is named by the server.
  async function bulkStop() {
    const ids = [...selected];
    try {
      await api('DELETE', '/api/v1/process/bulk', {json: ids});
      mount(bulkMsg, h('p', {class: 'notice ok', role: 'status', id: 'process-bulk-ok'},
        `Stop requested for ${ids.length} process(es).`));
    } catch (e) {
      mount(bulkMsg, h('p', {class: 'notice error', role: 'alert', id: 'process-bulk-error'}, e.message));
    }
    mount(bulkHolder, bulkBtn);
    selected.clear();
    for (const row of rows.values()) row.tr.querySelector('.row-select').checked = false;
    drawBulk();
    draw(await api('GET', path));
  }

  tbody.addEventListener('change', (ev) => {
    const box = ev.target;
    if (!box.classList || !box.classList.contains('row-select')) return;
    const id = box.closest('tr').dataset.id;
    if (box.checked) selected.add(id); else selected.delete(id);
    drawBulk();
  });

  let total = null; // GET /api/v2/process/count with the same filters, read with the first page
  function drawPager(n) {
    const prev = offset > 0 ? hashFor(Object.assign({}, query, {offset: Math.max(0, offset - limit) || ''})) : null;
    const next = n >= limit ? hashFor(Object.assign({}, query, {offset: offset + limit})) : null;
    const lastOffset = total > 0 ? Math.floor((total - 1) / limit) * limit : 0;
    const last = total !== null && lastOffset > offset ? hashFor(Object.assign({}, query, {offset: lastOffset})) : null;
    mount(pager,
      prev ? h('a', {class: 'btn secondary', href: prev, id: 'page-prev', rel: 'prev'}, '← Newer') : null,
      h('span', {class: 'hint', id: 'page-range'}, (n ? `${offset + 1}–${offset + n}` : '') +
        (total !== null ? ` of ${total.toLocaleString('en-US')}` : '')),
      next ? h('a', {class: 'btn secondary', href: next, id: 'page-next', rel: 'next'}, 'Older →') : null,
      last ? h('a', {class: 'btn secondary', href: last, id: 'page-last'}, 'Oldest page ⇥') : null);
  }

  // What an empty list means, and what to do about it.
  function empty() {
    const filtered = ['org', 'project', 'status', 'initiator', 'tags', 'flow', 'minDuration'].some((k) => query[k]);
    if (offset) return notice('info', 'No more processes: this is past the last page.');
    if (filtered)
      return h('div', {class: 'notice info empty-state', role: 'status', 'data-test': 'processes-empty'},
        'No processes match these filters. ', h('a', {href: '#/processes'}, 'Clear the filters'), ' to see them all.');
    return h('div', {class: 'notice info empty-state', role: 'status', 'data-test': 'processes-empty'},
      'No processes yet. Start one from a repository of a project (', h('a', {href: '#/orgs'}, 'Organizations'),
      ' → project → repository → Start a process), or with POST /api/v1/process.');
  }

  function rowAt(i) {
    const p = shown[i];
    let row = rows.get(p.instanceId);
    if (!row) {
      rows.set(p.instanceId, (row = makeRow(p)));
      row.tr.querySelector('.row-select').checked = selected.has(p.instanceId);
    }
    return row.tr;
  }

  function draw(list) {
    const keep = new Set(list.map((p) => p.instanceId));
    for (const id of rows.keys()) if (!keep.has(id)) rows.delete(id);
    for (const p of list) {
      const row = rows.get(p.instanceId);
      if (row) patchRow(row, p);
    }
    shown = list;
    drawBulk();
    win.set(list.length);
    mount(msg, list.length ? null : empty());
    drawPager(list.length);
  }

  mount(main,
    h('h1', {}, 'Processes'),
    filterForm(query),
    msg,
    bulkHolder, bulkMsg,
    h('div', {class: 'table-wrap'}, table),
    pager);
  const win = rowWindow(table, tbody, COLUMNS.length, rowAt);

  const countPath = '/api/v2/process/count' + apiQuery(query).replace(/&?(limit|offset)=\d+/g, '').replace('?&', '?');
  try {
    const [list, n] = await Promise.all([api('GET', path), api('GET', countPath).catch(() => null)]);
    total = typeof n === 'number' ? n : null;
    draw(list);
  } catch (e) {
    mount(msg, h('p', {class: 'notice error', role: 'alert', id: 'process-list-error'}, e.message));
    ready(main, 'processes', 'Processes');
    return win.stop;
  }
  ready(main, 'processes', 'Processes');
  let first = true;
  const stopPoll = poll(async () => {
    if (first) { // the first call of poll() comes at once; the list was just read
      first = false;
      return true;
    }
    draw(await api('GET', path));
    return true;
  }, POLL_MS);
  return () => {
    stopPoll();
    win.stop();
  };
}
