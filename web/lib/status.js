// Process statuses: which are final, how one is shown.
import {h} from './dom.js';

export const FINAL = new Set(['FINISHED', 'FAILED', 'CANCELLED', 'TIMED_OUT']);

// Statuses a stop (DELETE) can still change.
export const STOPPABLE = new Set(['NEW', 'PREPARING', 'ENQUEUED', 'WAITING', 'STARTING', 'RUNNING', 'SUSPENDED', 'RESUMING']);

// Each status is a pill with its own icon (style.css draws it before the name, so the
// element's text stays the status) and colour; the name is always written out.
export function statusBadge(status, attrs = {}) {
  return h('span', Object.assign({class: 'status ' + (status || '')}, attrs), status || '?');
}

// Updates a badge made by statusBadge in place.
export function setStatus(el, status) {
  if (el.textContent === status) return;
  el.textContent = status;
  el.className = 'status ' + status;
}
