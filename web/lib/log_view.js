// A process log, live: the tail first (the last TAIL bytes by Range, so a 100 MB log opens
// as fast as a small one), earlier parts on demand ("Load earlier"), then the log
// endpoint's follow mode (a streamed response read chunk by chunk) until the process ends
// or suspends; a suspended process is followed again once it runs.  Lines are coloured by
// level ([INFO ], [WARN ], [ERROR]); a line without a level takes the one above it.
// The view opens at the end and sticks to it while new lines come; scrolling up lets go
// (a "Jump to end" button takes the user back and follows again).  A line's leading
// timestamp is shown in the user's zone (lib/zone.js); the search marks the matching lines
// of what is loaded and steps through them.
import {api, enc, ApiError} from './api.js';
import {h} from './dom.js';
import {sleep} from './poll.js';
import {FINAL} from './status.js';
import {formatDate, onZone, zoneName, zonePicker} from './zone.js';

const TAIL = 64 * 1024;
const EARLIER = 256 * 1024;
const LEVEL = /^\S*\s*\[(ERROR|WARN|INFO|DEBUG|TRACE)\s*\]/;
const STAMP = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?)(Z|[+-]\d\d:?\d\d)(?=\s)/;
const NL = 10;
const NEAR_END_PX = 40;

// "…+0000" → a Date (the runner writes the offset without a colon, which Date does not read).
function stampDate(m) {
  const off = m[2] === 'Z' ? 'Z' : m[2].replace(/^([+-]\d\d):?(\d\d)$/, '$1:$2');
  const d = new Date(m[1] + off);
  return isNaN(d) ? null : d;
}

// "bytes a-b/size" → {a, b, size}
function contentRange(resp) {
  const m = /bytes (\d+)-(\d+)\/(\d+)/.exec(resp.headers.get('Content-Range') || '');
  return m ? {a: +m[1], b: +m[2], size: +m[3]} : null;
}

// Bytes fetched from offset a (> 0) start inside a line: drop up to the first newline.
function cutPartial(bytes, a) {
  if (a === 0) return {bytes, a};
  const i = bytes.indexOf(NL);
  if (i < 0) return {bytes: bytes.subarray(bytes.length), a: a + bytes.length};
  return {bytes: bytes.subarray(i + 1), a: a + i + 1};
}

export function logView(pid, {signal}) {
  const url = `/api/v1/process/${enc(pid)}/log`;
  const lines = h('div', {id: 'log', class: 'log', role: 'log', 'aria-label': 'Process log', tabindex: '0'});
  const partialEl = h('div', {class: 'log-line partial'});
  const earlier = h('button', {type: 'button', class: 'secondary', id: 'log-earlier', hidden: true, onclick: loadEarlier},
    'Load earlier');
  const info = h('span', {class: 'hint', id: 'log-info'});
  const live = h('span', {class: 'hint', id: 'log-live'});
  const jump = h('button', {type: 'button', class: 'log-jump', id: 'log-follow', hidden: true, onclick: () => toEnd()},
    'Jump to end and follow');
  const find = searchBox();
  const el = h('div', {class: 'log-view'},
    h('div', {class: 'row log-bar'}, earlier, info, live, find.el, zonePicker(h, 'log-zone'),
      h('a', {href: url, download: `${pid}.log`, id: 'log-download', class: 'btn secondary'}, 'Download')),
    h('div', {class: 'log-box'}, lines, jump));
  lines.append(partialEl);
  let start = 0, end = 0, size = 0, partial = '', lastLevel = '';
  let following = true, autoTop = 0;
  const decoder = new TextDecoder();

  function line(text, level) {
    const div = h('div', {class: 'log-line' + (level ? ' level-' + level : '')});
    const m = text ? STAMP.exec(text) : null;
    const d = m && stampDate(m);
    if (d) {
      div.append(h('time', {class: 'log-ts', datetime: d.toISOString(), title: m[0]}, formatDate(d, true)),
        text.slice(m[0].length));
    } else {
      div.textContent = text || '\u200b';
    }
    return div;
  }

  function levelOf(text, prev) {
    const m = LEVEL.exec(text);
    return m ? m[1] : prev;
  }

  function atBottom() {
    return lines.scrollHeight - lines.scrollTop - lines.clientHeight < NEAR_END_PX;
  }

  // Follows the end again: the log scrolled to its last line, and that line in view.
  function toEnd() {
    following = true;
    jump.hidden = true;
    stick();
    const r = lines.getBoundingClientRect();
    if (r.bottom > window.innerHeight) window.scrollBy(0, r.bottom - window.innerHeight + 8);
  }

  function stick() {
    lines.scrollTop = lines.scrollHeight;
    autoTop = lines.scrollTop;
  }

  // Scrolling up lets go of the end; reaching the end again follows it.
  lines.addEventListener('scroll', () => {
    if (atBottom()) {
      following = true;
      jump.hidden = true;
    } else if (lines.scrollTop < autoTop - 2) {
      letGo();
    }
  }, {passive: true});

  function letGo() {
    following = false;
    jump.hidden = false;
  }

  const offZone = onZone(() => {
    for (const t of lines.querySelectorAll('time.log-ts')) {
      t.textContent = formatDate(new Date(t.getAttribute('datetime')), true);
    }
    lines.dataset.zone = zoneName();
  });
  signal.addEventListener('abort', offZone, {once: true});
  lines.dataset.zone = zoneName();

  // Appends decoded text: whole lines become elements, the unfinished one stays in partialEl.
  function appendText(text) {
    if (!text) return;
    const parts = (partial + text).split('\n');
    partial = parts.pop();
    if (parts.length) {
      const frag = document.createDocumentFragment();
      for (const t of parts) {
        lastLevel = levelOf(t, lastLevel);
        frag.append(line(t, lastLevel));
      }
      lines.insertBefore(frag, partialEl);
    }
    partialEl.textContent = partial;
    if (following) stick();
    find.refresh();
  }

  // The search box: Enter or "Next" goes to the next matching line, Shift+Enter or
  // "Previous" to the one before; a new text starts from the last match (the newest).
  function searchBox() {
    const input = h('input', {type: 'search', id: 'log-search', 'aria-label': 'Search the log', placeholder: 'Search the log',
      autocomplete: 'off'});
    const count = h('span', {class: 'hint', id: 'log-search-count', 'aria-live': 'polite'});
    const prev = h('button', {type: 'button', class: 'secondary small', id: 'log-search-prev', 'aria-label': 'Previous match'}, '↑');
    const next = h('button', {type: 'button', class: 'secondary small', id: 'log-search-next', 'aria-label': 'Next match'}, '↓');
    let term = '', matches = [], at = -1;

    function mark() {
      for (const m of lines.querySelectorAll('.log-line.match')) m.classList.remove('match', 'current');
      matches = [];
      if (!term) return;
      const t = term.toLowerCase();
      for (const l of lines.children) if (l.textContent.toLowerCase().includes(t)) {
        l.classList.add('match');
        matches.push(l);
      }
    }

    function show() {
      for (const m of lines.querySelectorAll('.log-line.current')) m.classList.remove('current');
      if (!term) {
        count.textContent = '';
        return;
      }
      if (!matches.length) {
        count.textContent = start > 0 ? 'not in the part loaded (Load earlier)' : 'no match';
        return;
      }
      const cur = matches[at];
      cur.classList.add('current');
      count.textContent = `${at + 1} of ${matches.length}`;
      letGo();
      lines.scrollTop = cur.offsetTop - lines.offsetTop - lines.clientHeight / 3;
    }

    function go(step) {
      if (input.value !== term) {
        term = input.value;
        mark();
        at = matches.length - 1;
      } else if (matches.length) {
        at = (at + step + matches.length) % matches.length;
      }
      show();
    }

    input.addEventListener('keydown', (ev) => {
      if (ev.key !== 'Enter') return;
      ev.preventDefault();
      go(ev.shiftKey ? -1 : 1);
    });
    input.addEventListener('search', () => { if (!input.value) go(0); });
    prev.addEventListener('click', () => go(-1));
    next.addEventListener('click', () => go(1));
    return {
      el: h('div', {class: 'log-search row', role: 'search'}, input, prev, next, count),
      // new lines: marked too (the current match stays where it is)
      refresh() {
        if (!term) return;
        const cur = matches[at];
        mark();
        at = Math.max(0, matches.indexOf(cur));
        if (cur) cur.classList.add('current');
        count.textContent = matches.length ? `${at + 1} of ${matches.length}` : count.textContent;
      },
      find(text) {
        input.value = text;
        go(0);
      },
    };
  }

  // Earlier bytes [a, start): whole lines before the first shown one.
  function prependBytes(bytes) {
    const text = new TextDecoder().decode(bytes);
    const parts = text.split('\n');
    if (parts.length && parts[parts.length - 1] === '') parts.pop();
    const frag = document.createDocumentFragment();
    let level = '';
    for (const t of parts) {
      level = levelOf(t, level);
      frag.append(line(t, level));
    }
    const before = lines.scrollHeight;
    lines.insertBefore(frag, lines.firstChild);
    lines.scrollTop += lines.scrollHeight - before;
    autoTop = lines.scrollTop;
    find.refresh();
  }

  function drawInfo() {
    earlier.hidden = start === 0;
    info.textContent = start > 0 ? `showing the last ${fmtBytes(end - start)} of ${fmtBytes(Math.max(size, end))}` : '';
  }

  async function loadTail() {
    let resp;
    try {
      resp = await api('GET', url, {raw: true, headers: {Range: `bytes=-${TAIL}`}, signal});
    } catch (e) {
      if (e instanceof ApiError && e.status === 416) return; // an empty log
      throw e;
    }
    let bytes = new Uint8Array(await resp.arrayBuffer());
    const r = contentRange(resp);
    let a = r ? r.a : 0;
    size = r ? r.size : bytes.length;
    end = a + bytes.length;
    ({bytes, a} = cutPartial(bytes, a));
    start = a;
    appendText(decoder.decode(bytes, {stream: true}));
    drawInfo();
  }

  async function loadEarlier() {
    if (start === 0) return;
    earlier.disabled = true;
    try {
      const from = Math.max(0, start - EARLIER);
      const resp = await api('GET', url, {raw: true, headers: {Range: `bytes=${from}-${start - 1}`}, signal});
      let bytes = new Uint8Array(await resp.arrayBuffer());
      let a = from;
      ({bytes, a} = cutPartial(bytes, a));
      if (bytes.length) prependBytes(bytes);
      start = a;
    } finally {
      earlier.disabled = false;
      drawInfo();
    }
  }

  // One follow request from `end`: read until the server ends the stream.
  async function followOnce() {
    const resp = await api('GET', url + '?follow=true', {raw: true, headers: {Range: `bytes=${end}-`}, signal});
    const reader = resp.body.getReader();
    for (;;) {
      const {value, done} = await reader.read();
      if (done) break;
      end += value.length;
      size = Math.max(size, end);
      appendText(decoder.decode(value, {stream: true}));
    }
  }

  // Follows the log until the process is final (status() says it) or signal aborts.
  async function follow(status) {
    while (!signal.aborted) {
      const s = await status();
      if (FINAL.has(s)) {
        // the last bytes written before the end
        await followOnce().catch(() => {});
        break;
      }
      live.textContent = s === 'SUSPENDED' ? 'suspended' : 'live';
      if (s === 'SUSPENDED') {
        // what it wrote since we last read: it may have run and suspended again meanwhile
        await followOnce().catch(() => {});
        await sleep(2000, signal);
        continue;
      }
      try {
        await followOnce();
      } catch (e) {
        if (signal.aborted) return;
        console.error(e);
        await sleep(2000, signal);
      }
    }
    live.textContent = '';
    lines.dataset.complete = 'true';
  }

  // Once the view is in the page: its end in view (a search from the address goes to the
  // newest matching line instead).
  function shown(search) {
    toEnd();
    if (search) find.find(search);
  }

  return {el, loadTail, follow, shown};
}

export function fmtBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
