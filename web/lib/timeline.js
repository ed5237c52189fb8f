// A process's events as a timeline: task calls (ELEMENT events with phase pre/post paired
// by data.correlationId) as one entry with their duration and error, flow steps, status
// changes, waits, checkpoints and restores.  Events come in pages (limit=perPage, 200 unless the
// address says `pageSize=`; fromId=<the
// previous page's last seqId>) and at most WINDOW pages are in the page at once: a process
// of 10,000 task calls is never one request nor 100,000 DOM nodes.  Scrolling to the end
// (or **Later events**) loads the next page and drops the first one; **Earlier events**
// goes back.  While the last page is shown, new events of a running process are appended
// and a task's POST patches the entry its PRE made.
import {api, enc} from './api.js';
import {h, mount, when, duration} from './dom.js';
import {statusBadge} from './status.js';

// A form's own event name is its instance id; the timeline names the form instead.
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function where(d) {
  if (!d.fileName && !d.processDefinitionId) return '';
  const at = d.fileName ? `${d.fileName}${d.line ? ':' + d.line : ''}` : '';
  return [d.processDefinitionId ? `flow ${d.processDefinitionId}` : '', at].filter(Boolean).join(', ');
}

function summary(ev) {
  const d = ev.data || {};
  switch (ev.eventType) {
  case 'PROCESS_STATUS': return ['Status ', statusBadge(d.status)];
  case 'PROCESS_WAIT': {
    const forms = (d.forms || []).map((f) => (f && f.name) || f);
    const events = (d.eventNames || []).filter((n) => !forms.includes(n) && !UUID.test(n));
    const what = [...forms.map((f) => `form ${f}`), ...events.map((e) => `event ${e}`)];
    return `Waiting for ${what.length ? what.join(', ') : 'an event'}`;
  }
  case 'CHECKPOINT': return `Checkpoint ${d.name || d.checkpointName || ''}`;
  case 'CHECKPOINT_RESTORE': return `Restored from checkpoint ${d.checkpointName || d.checkpointId || ''} (was ${d.processStatus || '?'})`;
  case 'ELEMENT': return d.description || d.name || 'step';
  default: return ev.eventType;
  }
}

export const PAGE_DEFAULT = 200;
export const WINDOW = 3;
const PAGE_MAX = 100000; // the events API's limit

// pageSize: events per page (text from the address, `?pageSize=`; default PAGE_DEFAULT).
export function timeline(pid, pageSize) {
  const n = Number(pageSize);
  const perPage = Number.isInteger(n) && n >= 2 && n <= PAGE_MAX ? n : PAGE_DEFAULT;
  const list = h('ol', {class: 'timeline', id: 'events'});
  const earlier = h('button', {type: 'button', class: 'secondary', id: 'events-earlier', hidden: true}, '↑ Earlier events');
  const later = h('button', {type: 'button', class: 'secondary', id: 'events-later', hidden: true}, 'Later events ↓');
  const range = h('p', {class: 'hint', id: 'events-range', 'aria-live': 'polite'});
  const tasks = new Map(); // correlationId → {li, dur, pre}
  // starts[k]: the fromId of page k (-1: from the first event); shown: the pages in the
  // list, each {k, lis, last: its last seqId, full: perPage events (more may follow)}
  const starts = [-1];
  let shown = [];
  let failure = null;
  let busy = Promise.resolve();

  function add(ev, lis) {
    const d = ev.data || {};
    const phase = (d.phase || '').toLowerCase();
    if (ev.eventType === 'ELEMENT' && phase === 'post' && tasks.has(d.correlationId)) {
      const t = tasks.get(d.correlationId);
      finish(t, ev);
      return null;
    }
    const dur = h('span', {class: 'ev-duration', 'data-test': 'event-duration'});
    const err = h('span', {class: 'ev-error'});
    const kind = ev.eventType === 'ELEMENT' && phase ? 'task' : ev.eventType.toLowerCase();
    const st = ev.eventType === 'PROCESS_STATUS' && d.status ? ' st-' + d.status : '';
    const li = h('li', {class: 'ev ev-' + kind + st, 'data-seq': ev.seqId, 'data-type': ev.eventType,
      'data-correlation': d.correlationId || null},
      h('span', {class: 'ev-time'}, when(ev.eventDate)),
      h('span', {class: 'ev-what'}, summary(ev), d.method ? h('span', {class: 'hint'}, ` .${d.method}()`) : null),
      dur, err,
      where(d) ? h('span', {class: 'ev-where hint'}, where(d)) : null);
    li.dataset.at = d.fileName && d.line ? `${d.fileName}:${d.line}:${d.column || 0}` : '';
    const t = {li, dur, err, pre: ev};
    if (ev.eventType === 'ELEMENT' && phase === 'pre') {
      tasks.set(d.correlationId, t);
      li.classList.add('running');
      dur.textContent = 'running…';
    } else if (ev.eventType === 'ELEMENT' && phase === 'post') {
      finish(t, ev); // a POST without its PRE (a parallel call begun on an earlier page)
    }
    lis.push(li);
    return li;
  }

  function finish(t, post) {
    const d = post.data || {};
    const ms = typeof d.duration === 'number' ? d.duration
      : t.pre && t.pre !== post ? new Date(post.eventDate) - new Date(t.pre.eventDate) : null;
    t.li.classList.remove('running');
    t.dur.textContent = ms === null ? '' : duration(ms);
    if (d.error) {
      t.li.classList.add('failed');
      t.err.textContent = d.error;
    }
  }

  // Up to `limit` events from fromId; a full answer gives back the task calls begun at its
  // end (trailing PRE events), so that the next page starts with them and pairs them.
  async function fetchPage(from, limit) {
    const q = new URLSearchParams({limit: String(limit)});
    if (from >= 0) q.set('fromId', String(from));
    const events = await api('GET', `/api/v1/process/${enc(pid)}/event?${q}`);
    const full = events.length === limit;
    let n = events.length;
    while (full && n > 1 && events[n - 1].eventType === 'ELEMENT' && ((events[n - 1].data || {}).phase || '').toLowerCase() === 'pre') n--;
    return {events: events.slice(0, n), full};
  }

  function forget(page) {
    for (const li of page.lis) {
      li.remove();
      if (li.dataset.correlation) tasks.delete(li.dataset.correlation);
    }
  }

  const atEnd = () => shown.length > 0 && !shown[shown.length - 1].full;

  function drawState() {
    const first = shown[0];
    earlier.hidden = !first || first.k === 0;
    later.hidden = !shown.length || atEnd();
    const n = list.querySelectorAll('li.ev').length;
    const k2 = shown.length ? shown[shown.length - 1].k + 1 : 0;
    range.textContent = shown.length ? (first.k + 1 === k2 ? `Page ${k2}` : `Pages ${first.k + 1}–${k2}`) +
      ` of the events (${perPage} a page${atEnd() ? ', to the last' : ', more follow'}): ${n} entries shown.` : '';
    range.hidden = !(first && (first.k > 0 || !atEnd()));
    const empty = list.querySelector('li.empty');
    if (!list.querySelector('li.ev') && !empty) mount(list, h('li', {class: 'hint empty'}, 'No events yet.'));
    else if (list.querySelector('li.ev') && empty) empty.remove();
    if (failure && atEnd()) mark(failure);
  }

  // Loads page k after (or, with before, ahead of) the pages shown; the window keeps WINDOW.
  async function load(k, before) {
    let {events, full} = await fetchPage(starts[k], perPage);
    if (before) events = events.filter((ev) => ev.seqId <= starts[k + 1]); // the page shown after it starts there
    else starts[k + 1] = events.length ? events[events.length - 1].seqId : starts[k];
    const page = {k, lis: [], count: events.length, last: starts[k + 1], full: before || full};
    const frag = document.createDocumentFragment();
    for (const ev of events) {
      const li = add(ev, page.lis);
      if (li) frag.append(li);
    }
    if (before) {
      list.prepend(frag);
      shown.unshift(page);
      while (shown.length > WINDOW) forget(shown.pop());
    } else {
      list.append(frag);
      shown.push(page);
      while (shown.length > WINDOW) forget(shown.shift());
    }
  }

  function serial(fn) {
    busy = busy.then(fn).then(drawState);
    return busy;
  }

  // First call: the first page.  Later calls (the process page's status poll): the events
  // written since, while the last page is shown and has room (else "Later events" shows).
  async function refresh() {
    return serial(async () => {
      if (!shown.length) return load(0);
      const last = shown[shown.length - 1];
      if (last.full) return;
      const {events, full} = await fetchPage(last.last, perPage - last.count);
      const frag = document.createDocumentFragment();
      for (const ev of events) {
        const li = add(ev, last.lis);
        if (li) frag.append(li);
      }
      list.append(frag);
      last.count += events.length;
      if (events.length) last.last = starts[last.k + 1] = events[events.length - 1].seqId;
      last.full = full;
    });
  }

  const next = () => serial(async () => { if (shown.length && !atEnd()) await load(shown[shown.length - 1].k + 1); });
  later.addEventListener('click', next);
  earlier.addEventListener('click', () => serial(async () => { if (shown.length && shown[0].k > 0) await load(shown[0].k - 1, true); }));
  // reaching the end of the list loads the next page
  if (typeof IntersectionObserver === 'function')
    new IntersectionObserver((seen) => { if (seen.some((e) => e.isIntersecting) && !later.hidden) next(); }).observe(later);

  // Marks the step the process failed at (f: lib/failure.js): the step entry at that place,
  // or — a step that leaves no event, such as throw — an entry of its own at the end.  Only
  // on the last page: it is marked when that page is shown.
  function mark(f) {
    if (list.querySelector('#failing-step')) return;
    const at = f.fileName ? `${f.fileName}:${f.line}:${f.column}` : '';
    const steps = at ? [...list.querySelectorAll('li.ev')].filter((li) => li.dataset.at === at) : [];
    let li = steps.length ? steps[steps.length - 1] : null;
    if (!li) {
      li = h('li', {class: 'ev ev-failure'},
        h('span', {class: 'ev-time'}),
        h('span', {class: 'ev-what'}, 'The step that failed'),
        h('span', {class: 'ev-error'}, f.message),
        at ? h('span', {class: 'ev-where hint'}, [f.flow ? `flow ${f.flow}` : '', at].filter(Boolean).join(', ')) : null);
      const end = list.querySelector('li.st-FAILED, li.st-TIMED_OUT');
      list.insertBefore(li, end);
      shown[shown.length - 1].lis.push(li);
    }
    li.id = 'failing-step';
    li.classList.add('failed', 'failing');
    li.querySelector('.ev-what').prepend(h('strong', {class: 'failed-here'}, 'Failed here: '));
  }

  function markFailure(f) {
    failure = f;
    return serial(() => {});
  }

  return {el: h('div', {class: 'events'}, range, earlier, list, later), refresh, markFailure};
}
