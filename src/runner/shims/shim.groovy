// Accord's Groovy script helper: runs `script: groovy` steps for one process, speaking the
// script protocol (docs/flows.md "Scripts") on stdin/stdout (a JVM cannot open fd 3): one
// JSON object per line.  Started by the runner (src/runner/script_host.c) as
// `groovy -e <this file>`; while a script runs, System.out and System.err are log lines.
import groovy.json.JsonOutput
import groovy.json.JsonSlurper
import org.codehaus.groovy.control.MultipleCompilationErrorsException
import org.codehaus.groovy.control.messages.SyntaxErrorMessage

class Proto {
    static PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, 'UTF-8')
    static BufferedReader input = new BufferedReader(new InputStreamReader(new FileInputStream(FileDescriptor.in), 'UTF-8'))

    static synchronized void send(Map msg) {
        out.print(JsonOutput.toJson(msg) + '\n')
        out.flush()
    }

    static Map receive() {
        String line = input.readLine()
        if (line == null) {
            Runtime.runtime.halt(0)
        }
        return (Map) new JsonSlurper().parseText(line)
    }

    static String text(Object v) {
        if (v == null) return 'null'
        if (v instanceof Map) return '{' + ((Map) v).collect { k, x -> "${k}=${text(x)}" }.join(', ') + '}'
        if (v instanceof Collection) return '[' + ((Collection) v).collect { text(it) }.join(', ') + ']'
        return v.toString()
    }

    static Object plain(Object v, String what, List seen = []) {
        if (v == null || v instanceof Boolean || v instanceof String || v instanceof Integer || v instanceof Long ||
                v instanceof BigInteger || v instanceof Short || v instanceof Byte) return v
        if (v instanceof GString || v instanceof Character) return v.toString()
        if (v instanceof Double || v instanceof Float) return ((Number) v).isNaN() || ((Number) v).isInfinite() ? null : v
        if (v instanceof BigDecimal) return v
        if (seen.any { it.is(v) }) throw new IllegalArgumentException("Can't set a non-serializable ${what} -> a value that contains itself")
        List next = seen + [v]
        if (v instanceof Map) {
            Map out = new LinkedHashMap()
            ((Map) v).each { k, x -> out[k.toString()] = plain(x, what, next) }
            return out
        }
        if (v instanceof Collection || v instanceof Object[]) return v.collect { plain(it, what, next) }
        throw new IllegalArgumentException("Can't set a non-serializable ${what} -> ${v.getClass()} " +
                '(use maps, lists, strings, numbers, booleans or null)')
    }

    static Object wrap(Object v) {
        if (v instanceof Map) {
            Map m = new LinkedHashMap()
            ((Map) v).each { k, x -> m[k] = wrap(x) }
            return m
        }
        if (v instanceof List) return new ArrayList(((List) v).collect { wrap(it) })
        return v
    }
}

class LogStream extends OutputStream {
    String level
    ByteArrayOutputStream buf = new ByteArrayOutputStream()

    LogStream(String level) { this.level = level }

    synchronized void write(int b) {
        if (b == 10) {
            Proto.send([op: 'log', level: level, msg: buf.toString('UTF-8')])
            buf.reset()
        } else {
            buf.write(b)
        }
    }

    synchronized void flush() {
        if (buf.size() > 0) {
            Proto.send([op: 'log', level: level, msg: buf.toString('UTF-8')])
            buf.reset()
        }
    }
}

class Variables {
    Map vars

    Variables(Map vars) { this.vars = vars }

    Object get(String n, Object d = null) { vars.containsKey(n) ? vars[n] : d }
    boolean has(String n) { vars.containsKey(n) }
    Map toMap() { new LinkedHashMap(vars) }

    void set(String n, Object v) {
        Object value = Proto.plain(v, "local variable: ${n}")
        Proto.send([op: 'set', name: n, value: value])
        vars[n] = Proto.wrap(value)
    }

    void remove(String n) {
        set(n, null)
        vars.remove(n)
    }

    private Object typed(String n, Object d, Class c, String javaName) {
        Object v = vars[n]
        if (v == null) return d
        if (!c.isInstance(v)) {
            throw new IllegalArgumentException("Invalid variable '${n}' type, expected: ${javaName}, got: ${v.getClass().name}")
        }
        return v
    }

    private static Object required(String n, Object v) {
        if (v == null) throw new IllegalArgumentException("Mandatory variable '${n}' is required")
        return v
    }

    String getString(String n, String d = null) { typed(n, d, String, 'java.lang.String') }
    Integer getInt(String n, Integer d = null) { typed(n, d, Integer, 'java.lang.Integer') }
    Long getLong(String n, Long d = null) { Number x = typed(n, d, Number, 'java.lang.Long'); x == null ? null : x.longValue() }
    Number getNumber(String n, Number d = null) { typed(n, d, Number, 'java.lang.Number') }
    Boolean getBoolean(String n, Boolean d = null) { typed(n, d, Boolean, 'java.lang.Boolean') }
    Map getMap(String n, Map d = null) { typed(n, d, Map, 'java.util.Map') }
    List getList(String n, List d = null) { typed(n, d, List, 'java.util.List') }
    Collection getCollection(String n, Collection d = null) { typed(n, d, Collection, 'java.util.Collection') }
    Object assertVariable(String n) { required(n, get(n)) }
    String assertString(String n) { required(n, getString(n)) }
    Integer assertInt(String n) { required(n, getInt(n)) }
    Long assertLong(String n) { required(n, getLong(n)) }
    Number assertNumber(String n) { required(n, getNumber(n)) }
    Boolean assertBoolean(String n) { required(n, getBoolean(n)) }
    Map assertMap(String n) { required(n, getMap(n)) }
    List assertList(String n) { required(n, getList(n)) }
}

class Context {
    Map msg
    Variables vars

    Variables variables() { vars }
    Object getVariable(String n) { vars.get(n) }
    void setVariable(String n, Object v) { vars.set(n, v) }
    boolean hasVariable(String n) { vars.has(n) }
    void removeVariable(String n) { vars.remove(n) }
    String processInstanceId() { msg.instanceId }
    String getProcessInstanceId() { msg.instanceId }
    String workingDirectory() { msg.workDir }
    String toString() { 'Context' }
}

class TaskHandle {
    String name
    Context ctx

    def methodMissing(String method, Object args) {
        List list = []
        ((Object[]) args).eachWithIndex { a, i ->
            if (!a.is(ctx)) list << Proto.plain(a, "argument ${i + 1} of ${name}.${method}()")
        }
        Proto.send([op: 'task', task: name, method: method, args: list])
        Map m = null
        while (m == null || m.op != 'reply') m = Proto.receive()
        if (!m.ok) throw new RuntimeException((String) m.error)
        return Proto.wrap(m.value)
    }
}

class Tasks {
    Context ctx

    TaskHandle get(String name) { new TaskHandle(name: name, ctx: ctx) }
}

class Log {
    private static void at(String level, Object fmt, Object[] args) {
        int i = 0
        String s = fmt.toString().replaceAll(/\{\}/) { i < args.length ? Proto.text(args[i++]) : '{}' }
        Proto.send([op: 'log', level: level, msg: s])
    }

    void info(Object fmt, Object... args) { at('INFO', fmt, args) }
    void warn(Object fmt, Object... args) { at('WARN', fmt, args) }
    void error(Object fmt, Object... args) { at('ERROR', fmt, args) }
    void debug(Object fmt, Object... args) { at('DEBUG', fmt, args) }
    void trace(Object fmt, Object... args) { at('DEBUG', fmt, args) }
}

class Result {
    Map items = new LinkedHashMap()

    Result set(String k, Object v) {
        items[k] = Proto.plain(v, "result value: ${k}")
        return this
    }
}

String errorText(Throwable e, String name) {
    String where = ''
    String msg
    if (e instanceof MultipleCompilationErrorsException) {
        def first = e.errorCollector.errors ? e.errorCollector.errors[0] : null
        def cause = first instanceof SyntaxErrorMessage ? first.cause : null
        msg = 'SyntaxError: ' + (cause ? cause.originalMessage : e.message)
        if (cause) where = " (${name == 'script' ? '' : name + ', '}line ${cause.line})"
        return msg + where
    }
    def frame = e.stackTrace.find { it.fileName == name }
    if (frame) where = " (${name == 'script' ? '' : name + ', '}line ${frame.lineNumber})"
    return "${e.getClass().name}: ${e.message}${where}"
}

void runOne(Map m) {
    String name = m.name ?: 'script'
    Map vars = (Map) Proto.wrap(m.vars ?: [:])
    Variables variables = new Variables(vars)
    Context ctx = new Context(msg: m, vars: variables)
    Result result = new Result()
    Binding b = new Binding(new LinkedHashMap(vars))
    [execution: ctx, context: ctx, tasks: new Tasks(ctx: ctx), log: new Log(), result: result,
     isDryRun: m.dryRun ? true : false].each { k, v -> b.setVariable(k, v) }
    PrintStream saved = System.out, savedErr = System.err
    LogStream out = new LogStream('INFO'), err = new LogStream('ERROR')
    System.setOut(new PrintStream(out, true, 'UTF-8'))
    System.setErr(new PrintStream(err, true, 'UTF-8'))
    Map reply
    try {
        new GroovyShell(b).evaluate((String) m.body, name)
        reply = [op: 'done', result: result.items]
    } catch (Throwable e) {
        reply = [op: 'error', message: errorText(e, name)]
    } finally {
        System.setOut(saved)
        System.setErr(savedErr)
        out.flush()
        err.flush()
    }
    Proto.send(reply)
}

System.setOut(System.err)
while (true) {
    Map m = Proto.receive()
    if (m.op == 'run') runOne(m)
}
