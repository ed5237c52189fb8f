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
      failed(main, e.message || String(e));
      return;
    }
    if (my === seq) cleanup = typeof c === 'function' ? c : null;
    else if (typeof c === 'function') c();
    return;
  }
  failed(main, `No page at ${path}.`);
}

// A page that could not be shown: the message, and data-ready="error" for the tests.
function failed(main, message) {
  main.replaceChildren();
  const p = document.createElement('p');
  p.className = 'notice error';
  p.setAttribute('role', 'alert');
  p.textContent = message;
  main.append(p);
  main.dataset.ready = 'error';
}
