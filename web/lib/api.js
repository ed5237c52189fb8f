// The console's one way to the API: same origin, the session cookie, the CSRF header on
// every request that changes something, and X-Concord-UI-Request so that a 401 never makes
// the browser show its own password dialog.
import {session} from './session.js';

export class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body; // the parsed JSON error body, when there was one
  }
}

// api('GET', '/api/v1/org') → parsed JSON (or text for text/*, or null for 204).
// opts: {json: value} sends JSON; {body: FormData|Blob|string} sends as is;
//       {headers: {...}}; {raw: true} returns the Response itself (for ranges/streams);
//       {signal} aborts.
export async function api(method, path, opts = {}) {
  const headers = Object.assign({'X-Concord-UI-Request': 'true', 'Accept': 'application/json'}, opts.headers || {});
  let body = opts.body;
  if (opts.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.json);
  }
  if (method !== 'GET' && method !== 'HEAD' && session.csrf) headers['X-Accord-CSRF'] = session.csrf;
  const resp = await fetch(path, {method, headers, body, credentials: 'same-origin', signal: opts.signal});
  if (resp.status === 401 && !opts.noLoginRedirect) {
    session.clear();
    location.hash = '#/login?from=' + encodeURIComponent(location.hash || '#/processes');
    throw new ApiError(401, 'please log in');
  }
  if (opts.raw && resp.ok) return resp;
  const type = resp.headers.get('Content-Type') || '';
  let data = null;
  if (resp.status !== 204) {
    if (type.includes('json')) data = await resp.json().catch(() => null);
    else data = await resp.text();
  }
  if (!resp.ok) {
    let msg = (data && typeof data === 'object' && data.message) || (typeof data === 'string' && data) || '';
    if (Array.isArray(data) && data.length && data[0].message) msg = data.map((x) => x.message).join('; ');
    throw new ApiError(resp.status, msg || `${method} ${path}: HTTP ${resp.status}`, data);
  }
  return data;
}

// Query string from an object, leaving out empty values.
export function qs(params) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {}))
    if (v !== undefined && v !== null && v !== '') u.set(k, v);
  const s = u.toString();
  return s ? '?' + s : '';
}

export const enc = encodeURIComponent;
