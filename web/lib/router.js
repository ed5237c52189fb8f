// Hash routes: '#/process/{id}/log?x=1'.  Each page is a module exporting
// `async render(main, params, query)`; it may return a cleanup function, called when the
// user navigates away (stop timers, abort streams).  Pages are loaded on first use.

const routes = [];
let cleanup = null;
let seq = 0;

// pattern: '/process/{id}' ; load: () => import('./pages/process.js')
export function route(pattern, load, opts = {}) {
  const names = [];
  const re = new RegExp('^' + pattern.replace(/\{(\w+)\}/g, (_, n) => (names.push(n), '([^/]+)')) + '$');
  routes.push({re, names, load, opts});
}

export function parse(hash) {
  const h = (hash || '').replace(/^#/, '') || '/processes';
  const i = h.indexOf('?');
  const path = i < 0 ? h : h.slice(0, i);
  const query = Object.fromEntries(new URLSearchParams(i < 0 ? '' : h.slice(i + 1)));
  return {path, query};
}

export function go(hash) {
  if (location.hash === hash) render();
  else location.hash = hash;
}

export async function render(beforeRender) {
  const my = ++seq;
  const {path, query} = parse(location.hash);
  const main = document.getElementById('main');
  if (cleanup) {
    try { cleanup(); } catch (e) { console.error(e); }
    cleanup = null;
  }
  delete main.dataset.ready;
  for (const r of routes) {
    const m = r.re.exec(path);
    if (!m) continue;
    const params = {};
    r.names.forEach((n, i) => (params[n] = decodeURIComponent(m[i + 1])));
    if (beforeRender && !(await beforeRender(r.opts, path, query))) return;
    const mod = await r.load();
    if (my !== seq) return; // the user went elsewhere meanwhile
    main.replaceChildren();
    let c = null;
    try {
      c = await mod.render(main, params, query);
    } catch (e) {
      if (my !== seq) return;
      console.error(e);
      failed(main, e.message || String(e), e.status === 404 ? 'Not found' : 'This page could not be shown');
      return;
    }
    if (my === seq) cleanup = typeof c === 'function' ? c : null;
    else if (typeof c === 'function') c();
    return;
  }
  failed(main, `There is no page at ${path}.`, 'Page not found');
}

// A page that could not be shown: a heading, the message, ways back, and
// data-ready="error" for the tests.
function failed(main, message, heading) {
  main.replaceChildren();
  const el = (tag, attrs, text) => {
    const x = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) x.setAttribute(k, v);
    if (text) x.textContent = text;
    return x;
  };
  const back = el('button', {type: 'button', class: 'secondary', 'data-test': 'error-back'}, 'Go back');
  back.addEventListener('click', () => history.back());
  const ways = el('p', {class: 'row'});
  ways.append(back, el('a', {href: '#/processes', class: 'btn', 'data-test': 'error-home'}, 'Go to the processes'));
  main.append(el('h1', {'data-test': 'error-heading'}, heading),
    el('p', {class: 'notice error', role: 'alert'}, message), ways);
  document.title = heading + ' · Accord';
  main.dataset.ready = 'error';
}
