// A process log, live: the tail first (the last TAIL bytes by Range, so a 100 MB log opens
// as fast as a small one), earlier parts on demand ("Load earlier"), then the log
// endpoint's follow mode (a streamed response read chunk by chunk) until the process ends
// or suspends; a suspended process is followed again once it runs.  Lines are coloured by
// level ([INFO ], [WARN ], [ERROR]); a line without a level takes the one above it.
import {api, enc, ApiError} from './api.js';
import {h} from './dom.js';
import {sleep} from './poll.js';
import {FINAL} from './status.js';

const TAIL = 64 * 1024;
const EARLIER = 256 * 1024;
const LEVEL = /^\S*\s*\[(ERROR|WARN|INFO|DEBUG|TRACE)\s*\]/;
const NL = 10;

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
  const el = h('div', {class: 'log-view'},
    h('div', {class: 'row log-bar'}, earlier, info, live,
      h('a', {href: url, download: `${pid}.log`, id: 'log-download', class: 'btn secondary'}, 'Download')),
    lines);
  lines.append(partialEl);
  let start = 0, end = 0, size = 0, partial = '', lastLevel = '';
  const decoder = new TextDecoder();

  function line(text, level) {
    return h('div', {class: 'log-line' + (level ? ' level-' + level : '')}, text || '\u200b');
  }

  function levelOf(text, prev) {
    const m = LEVEL.exec(text);
    return m ? m[1] : prev;
  }

  function atBottom() {
    return lines.scrollHeight - lines.scrollTop - lines.clientHeight < 40;
  }

  // Appends decoded text: whole lines become elements, the unfinished one stays in partialEl.
  function appendText(text) {
    if (!text) return;
    const stick = atBottom();
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
    if (stick) lines.scrollTop = lines.scrollHeight;
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

  return {el, loadTail, follow};
}

export function fmtBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
