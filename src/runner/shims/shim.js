// Accord's JavaScript script helper: runs `script: js` steps for one process, speaking the
// script protocol (docs/flows.md "Scripts") on fd 3: one JSON object per line.  Started by
// the runner (src/runner/script_host.c) as `node -e <this file>`.
'use strict';
const fs = require('fs');
const vm = require('vm');
const util = require('util');

const FD = 3;
let pending = Buffer.alloc(0);

function send(msg) {
  const b = Buffer.from(JSON.stringify(msg) + '\n', 'utf8');
  for (let off = 0; off < b.length;) off += fs.writeSync(FD, b, off, b.length - off);
}

function receive() {
  const chunk = Buffer.alloc(65536);
  for (;;) {
    const nl = pending.indexOf(10);
    if (nl >= 0) {
      const line = pending.subarray(0, nl).toString('utf8');
      pending = pending.subarray(nl + 1);
      return JSON.parse(line);
    }
    let n;
    try {
      n = fs.readSync(FD, chunk, 0, chunk.length, null);
    } catch (e) {
      if (e.code === 'EAGAIN' || e.code === 'EINTR') continue;
      throw e;
    }
    if (n === 0) process.exit(0);
    pending = Buffer.concat([pending, chunk.subarray(0, n)]);
  }
}

// Concord's way of printing values: {k=v, n=[1, 2]}.
function text(v) {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return '[' + v.map(text).join(', ') + ']';
  if (v instanceof HashMap || (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype))
    return '{' + Object.keys(v).map((k) => k + '=' + text(v[k])).join(', ') + '}';
  if (typeof v === 'object') return util.inspect(v);
  return String(v);
}

// The Java collections scripts written for Concord use, as plain objects and arrays.
class HashMap {
  constructor(src) {
    if (src && typeof src === 'object') for (const k of Object.keys(src)) this[k] = src[k];
  }
  get(k) { return Object.prototype.hasOwnProperty.call(this, k) ? this[k] : null; }
  getOrDefault(k, d) { return Object.prototype.hasOwnProperty.call(this, k) ? this[k] : d; }
  put(k, v) { const old = this.get(k); this[k] = v; return old; }
  putAll(m) { for (const k of Object.keys(m)) this[k] = m[k]; }
  containsKey(k) { return Object.prototype.hasOwnProperty.call(this, k); }
  remove(k) { const old = this.get(k); delete this[k]; return old; }
  size() { return Object.keys(this).length; }
  isEmpty() { return this.size() === 0; }
  keySet() { return new ArrayList(Object.keys(this)); }
  values() { return new ArrayList(Object.values(this)); }
  clear() { for (const k of Object.keys(this)) delete this[k]; }
  toString() { return text(this); }
}

class ArrayList extends Array {
  constructor(src) {
    super();
    if (src && typeof src === 'object' && typeof src.length === 'number') for (const x of src) this.push(x);
  }
  static get [Symbol.species]() { return Array; }
  add(a, b) { if (arguments.length === 2) this.splice(a, 0, b); else this.push(a); return true; }
  addAll(c) { for (const x of c) this.push(x); return true; }
  get(i) { return this[i]; }
  set(i, v) { const old = this[i]; this[i] = v; return old; }
  size() { return this.length; }
  isEmpty() { return this.length === 0; }
  contains(x) { return this.includes(x); }
  remove(x) {
    const i = typeof x === 'number' ? x : this.indexOf(x);
    return i >= 0 && i < this.length ? this.splice(i, 1)[0] : (typeof x === 'number' ? undefined : false);
  }
  clear() { this.length = 0; }
  toString() { return text(this); }
}

const javaTypes = {
  'java.util.HashMap': HashMap, 'java.util.LinkedHashMap': HashMap, 'java.util.TreeMap': HashMap,
  'java.util.Map': HashMap, 'java.util.ArrayList': ArrayList, 'java.util.LinkedList': ArrayList,
  'java.util.List': ArrayList,
};

function javaType(name) {
  const t = javaTypes[name];
  if (!t) throw new Error("Java class not available in Accord's JavaScript: " + name +
                          ' (Java.type offers java.util.HashMap, LinkedHashMap, ArrayList, LinkedList)');
  return t;
}

// Flow values in: maps and lists behave like the Java ones too.
function wrap(v) {
  if (Array.isArray(v)) return new ArrayList(v.map(wrap));
  if (v && typeof v === 'object') {
    const m = new HashMap();
    for (const k of Object.keys(v)) m[k] = wrap(v[k]);
    return m;
  }
  return v;
}

// Script values out: JSON values only.
function plain(v, what, seen) {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case 'string': case 'boolean': return v;
    case 'number': return Number.isFinite(v) ? v : null;
    case 'bigint':
      if (v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(v);
      return v.toString();
    case 'function': case 'symbol':
      throw new TypeError("Can't set a non-serializable " + what + ' -> a JavaScript ' + typeof v +
                          ' (use maps, lists, strings, numbers, booleans or null)');
  }
  if (v instanceof Date) return v.toISOString();
  if (seen.includes(v)) throw new TypeError("Can't set a non-serializable " + what + ' -> a value that contains itself');
  seen.push(v);
  let out;
  if (Array.isArray(v) || v instanceof Set) {
    out = Array.from(v, (x) => plain(x, what, seen));
  } else if (v instanceof Map) {
    out = {};
    for (const [k, x] of v) out[String(k)] = plain(x, what, seen);
  } else {
    out = {};
    for (const k of Object.keys(v)) out[k] = plain(v[k], what, seen);
  }
  seen.pop();
  return out;
}

function format(fmt, args) {
  let i = 0;
  const s = String(fmt).replace(/\{\}/g, (m) => (i < args.length ? text(args[i++]) : m));
  const rest = args.slice(i).filter((a) => a instanceof Error);
  return rest.length ? s + ' ' + rest.map((e) => e.stack).join(' ') : s;
}

function logAt(level, msg) { send({ op: 'log', level: level, msg: msg }); }

function typeName(v) {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'java.util.List';
  if (typeof v === 'string') return 'java.lang.String';
  if (typeof v === 'number') return Number.isInteger(v) ? 'java.lang.Integer' : 'java.lang.Double';
  if (typeof v === 'boolean') return 'java.lang.Boolean';
  return 'java.util.Map';
}

function makeVariables(vars) {
  const has = (n) => Object.prototype.hasOwnProperty.call(vars, n);
  const typed = (check, javaName) => (n, d) => {
    if (!has(n) || vars[n] === null) return d === undefined ? null : d;
    const v = vars[n];
    if (!check(v)) throw new Error("Invalid variable '" + n + "' type, expected: " + javaName + ', got: ' + typeName(v));
    return v;
  };
  const asserted = (get) => (n) => {
    const v = get(n);
    if (v === null || v === undefined) throw new Error("Mandatory variable '" + n + "' is required");
    return v;
  };
  const isInt = (v) => Number.isInteger(v);
  const isMap = (v) => v && typeof v === 'object' && !Array.isArray(v);
  const self = {
    get: (n, d) => (has(n) ? vars[n] : d === undefined ? null : d),
    set: (n, v) => {
      const value = plain(v, 'local variable: ' + n, []);
      send({ op: 'set', name: String(n), value: value });
      vars[n] = wrap(value);
    },
    has: (n) => has(n),
    remove: (n) => { self.set(n, null); delete vars[n]; },
    toMap: () => new HashMap(vars),
    getString: typed((v) => typeof v === 'string', 'java.lang.String'),
    getInt: typed(isInt, 'java.lang.Integer'),
    getLong: typed(isInt, 'java.lang.Long'),
    getNumber: typed((v) => typeof v === 'number', 'java.lang.Number'),
    getBoolean: typed((v) => typeof v === 'boolean', 'java.lang.Boolean'),
    getMap: typed(isMap, 'java.util.Map'),
    getList: typed(Array.isArray, 'java.util.List'),
    getCollection: typed(Array.isArray, 'java.util.Collection'),
  };
  for (const k of ['String', 'Int', 'Long', 'Number', 'Boolean', 'Map', 'List', 'Collection'])
    self['assert' + k] = asserted(self['get' + k]);
  self.assert = asserted(self.get);
  return self;
}

function makeTasks(ctx) {
  const call = (task, method, args) => {
    send({ op: 'task', task: task, method: method,
           args: args.filter((a) => a !== ctx).map((a, i) => plain(a, 'argument ' + (i + 1) + ' of ' + task + '.' + method + '()', [])) });
    for (;;) {
      const m = receive();
      if (m.op !== 'reply') continue;
      if (!m.ok) throw new Error(m.error);
      return wrap(m.value);
    }
  };
  return {
    get: (name) => new Proxy({}, {
      get: (_, method) => (typeof method === 'string' && method !== 'then')
        ? (...args) => call(String(name), method, args) : undefined,
    }),
  };
}

function bindings(m) {
  const vars = {};
  for (const k of Object.keys(m.vars || {})) vars[k] = wrap(m.vars[k]);
  const variables = makeVariables(vars);
  const items = new HashMap();
  const ctx = {
    variables: () => variables,
    getVariable: (n) => variables.get(n),
    setVariable: (n, v) => variables.set(n, v),
    hasVariable: (n) => variables.has(n),
    removeVariable: (n) => variables.remove(n),
    getVariables: () => variables.toMap(),
    processInstanceId: () => m.instanceId,
    getProcessInstanceId: () => m.instanceId,
    workingDirectory: () => m.workDir,
    toString: () => 'Context',
  };
  const line = (level) => (...a) => logAt(level, a.map(text).join(' '));
  const log = {};
  for (const [k, level] of [['info', 'INFO'], ['warn', 'WARN'], ['error', 'ERROR'], ['debug', 'DEBUG'], ['trace', 'DEBUG']])
    log[k] = (fmt, ...args) => logAt(level, format(fmt, args));
  const out = { println: line('INFO'), print: line('INFO') };
  const b = Object.assign({}, vars, {
    execution: ctx, context: ctx, tasks: makeTasks(ctx), log: log, isDryRun: !!m.dryRun,
    result: { set: (k, v) => { items[k] = plain(v, 'result value: ' + k, []); return b.result; }, items: () => items },
    print: line('INFO'),
    console: { log: line('INFO'), info: line('INFO'), warn: line('WARN'), error: line('ERROR'), debug: line('DEBUG') },
    Java: { type: javaType },
    require: require, process: process, Buffer: Buffer,
    java: { util: { HashMap, LinkedHashMap: HashMap, TreeMap: HashMap, ArrayList, LinkedList: ArrayList },
            lang: { System: { out: out, err: { println: line('ERROR'), print: line('ERROR') } } } },
  });
  return { b: b, items: items };
}

function errorText(e, name) {
  // the script's errors come from the script's own realm: not instanceof this Error
  const isError = e && typeof e === 'object' && typeof e.message === 'string' && typeof e.stack === 'string';
  let msg = isError ? (e.name || 'Error') + ': ' + e.message : 'Error: ' + text(e);
  const stack = e && typeof e.stack === 'string' ? e.stack : '';
  const esc = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const at = stack.match(new RegExp('(?:^|\\(|at )' + esc + ':(\\d+)'));
  if (at) msg += ' (' + (name === 'script' ? '' : name + ', ') + 'line ' + at[1] + ')';
  return msg;
}

// Writes to process.stdout/stderr (Node's own console, a module printing) become log
// lines too, so that the runner masks them; fd 1 and 2 themselves are the runner's stderr.
function lineWriter(level) {
  let buf = '';
  return (chunk, encoding, cb) => {
    buf += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      logAt(level, buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
    if (typeof encoding === 'function') encoding();
    else if (typeof cb === 'function') cb();
    return true;
  };
}
process.stdout.write = lineWriter('INFO');
process.stderr.write = lineWriter('ERROR');

function run(m) {
  const { b, items } = bindings(m);
  try {
    const script = new vm.Script(m.body, { filename: m.name });
    script.runInContext(vm.createContext(b));
    send({ op: 'done', result: plain(items, 'the result', []) });
  } catch (e) {
    send({ op: 'error', message: errorText(e, m.name) });
  }
}

for (;;) {
  const m = receive();
  if (m.op === 'run') run(m);
}
