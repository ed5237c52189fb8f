// A process's events as a timeline: task calls (ELEMENT events with phase pre/post paired
// by data.correlationId) as one entry with their duration and error, flow steps, status
// changes, waits, checkpoints and restores.  New events are fetched with fromId=<last seqId>,
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

export function timeline(pid) {
  const list = h('ol', {class: 'timeline', id: 'events'});
  const tasks = new Map(); // correlationId → {li, dur, pre}
  let lastSeq = -1;

  function add(ev) {
    const d = ev.data || {};
    const phase = (d.phase || '').toLowerCase();
    if (ev.eventType === 'ELEMENT' && phase === 'post' && tasks.has(d.correlationId)) {
      const t = tasks.get(d.correlationId);
      finish(t, ev);
      return;
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
      finish(t, ev); // a POST without its PRE (an earlier page of events)
    }
    list.append(li);
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

  async function refresh() {
    const q = lastSeq >= 0 ? `?fromId=${lastSeq}` : '';
    const events = await api('GET', `/api/v1/process/${enc(pid)}/event${q}`);
    for (const ev of events) {
      add(ev);
      lastSeq = Math.max(lastSeq, ev.seqId);
    }
    const empty = list.querySelector('li.empty');
    if (lastSeq < 0 && !empty) mount(list, h('li', {class: 'hint empty'}, 'No events yet.'));
    else if (lastSeq >= 0 && empty) empty.remove();
  }

  // Marks the step the process failed at (f: lib/failure.js): the step entry at that place,
  // or — a step that leaves no event, such as throw — an entry of its own at the end.
  function markFailure(f) {
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
    }
    li.id = 'failing-step';
    li.classList.add('failed', 'failing');
    li.querySelector('.ev-what').prepend(h('strong', {class: 'failed-here'}, 'Failed here: '));
  }

  return {el: list, refresh, markFailure};
}
