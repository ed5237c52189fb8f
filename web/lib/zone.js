// The time zone dates are shown in: the browser's own ('local') or UTC, chosen by the user
// and remembered in localStorage.  Every shown date carries its zone's name.
const KEY = 'accord.zone';
const listeners = [];

export function zone() {
  try {
    return localStorage.getItem(KEY) === 'UTC' ? 'UTC' : 'local';
  } catch (e) {
    return 'local';
  }
}

export function setZone(z) {
  try {
    localStorage.setItem(KEY, z === 'UTC' ? 'UTC' : 'local');
  } catch (e) {
    // private mode: the choice lasts for this page only
  }
  [...listeners].forEach((fn) => fn(zone()));
}

export function onZone(fn) {
  listeners.push(fn);
  return () => {
    const i = listeners.indexOf(fn);
    if (i >= 0) listeners.splice(i, 1);
  };
}

// The local zone's short name ("CET", "GMT+1"); computed once.
let localName = null;
function localZoneName() {
  if (localName === null) {
    const part = new Intl.DateTimeFormat('en-US', {timeZoneName: 'short'}).formatToParts(new Date())
      .find((p) => p.type === 'timeZoneName');
    localName = part ? part.value : 'local';
  }
  return localName;
}

export function zoneName() {
  return zone() === 'UTC' ? 'UTC' : localZoneName();
}

const p2 = (n) => String(n).padStart(2, '0');

// A Date → "2026-11-23 18:04:05" in the chosen zone (with ms: ".123" after the seconds).
export function formatDate(d, ms) {
  const utc = zone() === 'UTC';
  const y = utc ? d.getUTCFullYear() : d.getFullYear();
  const mo = utc ? d.getUTCMonth() : d.getMonth();
  const day = utc ? d.getUTCDate() : d.getDate();
  const hh = utc ? d.getUTCHours() : d.getHours();
  const mi = utc ? d.getUTCMinutes() : d.getMinutes();
  const ss = utc ? d.getUTCSeconds() : d.getSeconds();
  const frac = ms ? '.' + String(d.getMilliseconds()).padStart(3, '0') : '';
  return `${y}-${p2(mo + 1)}-${p2(day)} ${p2(hh)}:${p2(mi)}:${p2(ss)}${frac}`;
}

// A select that switches the zone for every page (the pages redraw their dates).
export function zonePicker(h, id) {
  const sel = h('select', {id, 'aria-label': 'Time zone', class: 'zone-picker'},
    h('option', {value: 'local', selected: zone() === 'local'}, `Local time (${localZoneName()})`),
    h('option', {value: 'UTC', selected: zone() === 'UTC'}, 'UTC'));
  sel.addEventListener('change', () => setZone(sel.value));
  const off = onZone((z) => {
    if (!sel.isConnected) off(); // the page it was on is gone
    else if (sel.value !== z) sel.value = z;
  });
  return sel;
}
