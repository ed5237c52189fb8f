// #/process/{id}/form/{form}: one pending form (a custom form: its own page); after a valid
// submit, the wizard takes over (the process's next form or its end).
import {api, ApiError, enc} from '../lib/api.js';
import {h, mount, ready} from '../lib/dom.js';
import {renderForm} from '../lib/form.js';

export async function render(main, params) {
  const {id, form} = params;
  const holder = h('div', {id: 'form-holder'});
  mount(main,
    h('p', {class: 'crumbs'}, h('a', {href: '#/process/' + enc(id)}, 'Process ' + id)),
    h('h1', {}, 'Form ', h('span', {class: 'mono'}, form)),
    holder);
  try {
    // a custom form (forms/<name>/index.html in the process) is shown by its own page
    const def = await api('GET', `/api/v1/process/${enc(id)}/form/${enc(form)}`);
    if (def.custom) {
      const r = await api('POST', `/api/service/custom_form/${enc(id)}/${enc(form)}/start`);
      location.assign(r.uri);
      return;
    }
    await renderForm(holder, id, form, {title: false, onSubmitted: () => { location.hash = `#/process/${enc(id)}/wizard`; }});
  } catch (e) {
    if (!(e instanceof ApiError) || e.status === 401) throw e;
    mount(holder,
      h('p', {class: 'notice error', role: 'alert', id: 'form-error'}, e.message),
      h('p', {}, h('a', {href: `#/process/${enc(id)}/wizard`, id: 'form-wizard-link'}, 'Continue with the process')));
  }
  ready(main, 'form', 'Form ' + form);
  const first = holder.querySelector('input:not([type=hidden]), select, textarea');
  if (first) first.focus();
}
