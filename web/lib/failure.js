// Why a process failed, from what the server keeps: the message of its lastError (the
// out variables in meta.out), and where — file, line, column and flow — from the runner's
// error line at the end of the log ("(concord.yml): Error @ line: 8, col: 7. …", then the
// call stack "(concord.yml) @ line: 4, col: 7, thread: 0, flow: inner").  Only the log's
// last TAIL bytes are read.
import {api, enc} from './api.js';
import {h} from './dom.js';

const TAIL = 16 * 1024;
const ERROR_AT = /\[ERROR\]\s*\(([^)]+)\): Error @ line: (\d+), col: (\d+)\.\s*(.*)$/;
const STACK_FLOW = /@ line: \d+, col: \d+, thread: \d+, flow: (\S+)/;

async function logTail(pid) {
  try {
    const resp = await api('GET', `/api/v1/process/${enc(pid)}/log`, {raw: true, headers: {Range: `bytes=-${TAIL}`}});
    return await resp.text();
  } catch (e) {
    return ''; // no log (416) or none readable: the message alone
  }
}

// {message, flow, fileName, line, column} of a FAILED or TIMED_OUT process (fields it
// cannot tell are left out); null for other statuses.
export async function failureOf(proc) {
  if (proc.status !== 'FAILED' && proc.status !== 'TIMED_OUT') return null;
  const out = (proc.meta && proc.meta.out) || {};
  const f = {message: (out.lastError && out.lastError.message) || ''};
  const lines = (await logTail(proc.instanceId)).split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = ERROR_AT.exec(lines[i]);
    if (!m) continue;
    Object.assign(f, {fileName: m[1], line: +m[2], column: +m[3]});
    if (!f.message) f.message = m[4];
    const s = lines[i + 2] !== undefined && lines[i + 1].includes('Call stack') ? STACK_FLOW.exec(lines[i + 2]) : null;
    f.flow = s ? s[1] : (proc.meta && proc.meta.entryPoint) || '';
    break;
  }
  if (!f.message) f.message = proc.status === 'TIMED_OUT' ? 'The process ran out of time.' : 'The process failed.';
  return f;
}

export function where(f) {
  return f.fileName ? `${f.fileName}:${f.line}:${f.column}` : '';
}

// The banner at the top of a failed process's page; logHref(find) links into the log.
export function failureBanner(f, logHref) {
  const find = f.fileName ? `Error @ line: ${f.line}, col: ${f.column}` : f.message;
  return h('div', {class: 'failure', role: 'alert', id: 'process-failure'},
    h('h2', {}, 'Why it failed'),
    h('p', {class: 'failure-message', 'data-test': 'failure-message'}, f.message),
    h('p', {class: 'failure-where'},
      f.flow ? ['in flow ', h('strong', {'data-test': 'failure-flow'}, f.flow)] : null,
      f.fileName ? [f.flow ? ', step ' : 'at step ', h('code', {'data-test': 'failure-step'}, where(f))] : null,
      ' ', h('a', {href: logHref(find), id: 'failure-log-link'}, 'Show it in the log')));
}
