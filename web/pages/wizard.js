// #/process/{id}/wizard: where a start link lands and where a form submit leads.  Shows the
// process id and initiator, then each pending form in turn (the same form component as
// the form page), waiting for the process between them, then its end with a link to the
// process.  A form with `yield: true` ends the wizard after its submit, as in Concord.  A
// custom form (forms/<name>/index.html in the process) is opened in place of the generated
// one; its submit comes back here.
import {api, enc, ApiError} from '../lib/api.js';
import {h, mount, notice, ready} from '../lib/dom.js';
import {renderForm} from '../lib/form.js';
import {poll} from '../lib/poll.js';
import {FINAL, statusBadge, setStatus} from '../lib/status.js';

const POLL_MS = 1000;

export async function render(main, params) {
  const {id} = params;
  const statusEl = statusBadge('', {id: 'wizard-status'});
  const initiatorEl = h('dd', {id: 'wizard-initiator'});
  const stage = h('div', {id: 'wizard-stage', 'aria-live': 'polite'});
  let state = 'waiting'; // waiting | form | end
  let stop = null;

  function setStage(name, ...children) {
    state = name;
    stage.dataset.stage = name;
    if (name !== 'form') delete stage.dataset.form;
    mount(stage, ...children);
  }

  function processLink() {
    return h('p', {}, h('a', {class: 'btn', href: '#/process/' + enc(id), id: 'wizard-process-link'}, 'Open the process'));
  }

  function end(text) {
    setStage('end', notice('ok', text), processLink());
    if (stop) stop();
    return false;
  }

  async function showForm(name) {
    setStage('form');
    stage.dataset.form = name;
    const holder = h('div', {});
    stage.append(holder);
    try {
      await renderForm(holder, id, name, {
        prefix: 'f',
        onSubmitted(def) {
          if (def.yield) {
            end(`Form ${name} submitted; the process goes on in the background.`);
            return;
          }
          setStage('waiting', h('p', {class: 'waiting'}, `Form ${name} submitted. Waiting for the process…`));
        },
      });
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) throw e;
      // e.g. a form for other users (runAs): say so and leave the wizard
      setStage('end', h('p', {class: 'notice error', role: 'alert', id: 'wizard-error'}, `Form ${name}: ${e.message}`), processLink());
      if (stop) stop();
      return;
    }
    const first = holder.querySelector('input, select');
    if (first) first.focus();
  }

  // The custom form's page; when it cannot be opened (e.g. not this user's), the generated
  // form says why.
  async function openCustom(name) {
    let r;
    try {
      r = await api('POST', `/api/service/custom_form/${enc(id)}/${enc(name)}/start`);
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) throw e;
      await showForm(name);
      return;
    }
    state = 'end'; // leaving: no more polls
    if (stop) stop();
    stage.dataset.stage = 'leaving';
    mount(stage, h('p', {class: 'waiting'}, `Opening form ${name}…`));
    location.assign(r.uri);
  }

  async function step() {
    if (state === 'form') return true;
    const p = await api('GET', '/api/v1/process/' + enc(id));
    setStatus(statusEl, p.status);
    initiatorEl.textContent = p.initiator || '';
    if (FINAL.has(p.status)) return end(`The process ${p.status.toLowerCase().replace('_', ' ')}.`);
    if (p.status === 'SUSPENDED') {
      const forms = await api('GET', `/api/v1/process/${enc(id)}/form`);
      if (forms.length && forms[0].custom) {
        await openCustom(forms[0].name);
        return state !== 'end';
      }
      if (forms.length) {
        await showForm(forms[0].name);
        return state !== 'end';
      }
      return end('The process is waiting for an event; it goes on once that arrives.');
    }
    if (state !== 'waiting' || !stage.childNodes.length)
      setStage('waiting', h('p', {class: 'waiting'}, `The process is ${p.status}…`));
    else if (stage.querySelector('.waiting') && !stage.querySelector('.waiting').textContent.startsWith('Form'))
      stage.querySelector('.waiting').textContent = `The process is ${p.status}…`;
    return true;
  }

  mount(main,
    h('h1', {}, 'Process ', h('span', {class: 'mono', id: 'wizard-id'}, id)),
    h('dl', {class: 'facts'},
      h('dt', {}, 'Instance'), h('dd', {class: 'mono'}, id),
      h('dt', {}, 'Initiator'), initiatorEl,
      h('dt', {}, 'Status'), h('dd', {}, statusEl)),
    stage);
  setStage('waiting', h('p', {class: 'waiting'}, 'Loading…'));
  await step();
  ready(main, 'wizard', 'Process ' + id);
  if (state === 'end') return null;
  let skip = true;
  stop = poll(async () => {
    if (skip) { // poll() calls at once; step() just ran
      skip = false;
      return true;
    }
    return step();
  }, POLL_MS);
  return () => stop();
}
