# Accord's Ruby script helper: runs `script: ruby` steps for one process, speaking the script
# protocol (docs/flows.md "Scripts") on fd 3: one JSON object per line.  Started by the runner
# (src/runner/script_host.c) as `ruby -e <this file>`.
require 'json'

PROTO = IO.for_fd(3, 'r+', autoclose: false)
PROTO.binmode
PROTO.sync = true

def proto_send(msg)
  PROTO.write(JSON.generate(msg) + "\n")
end

def proto_receive
  line = PROTO.gets
  exit!(0) unless line
  JSON.parse(line.force_encoding('UTF-8'))
end

def concord_text(v)
  case v
  when nil then 'null'
  when Hash then '{' + v.map { |k, x| "#{k}=#{concord_text(x)}" }.join(', ') + '}'
  when Array then '[' + v.map { |x| concord_text(x) }.join(', ') + ']'
  else v.to_s
  end
end

# java.util.HashMap and ArrayList for scripts written for Concord (JRuby).
class AccordHashMap < Hash
  def self.new(src = nil)
    m = super()
    src&.each { |k, v| m[k] = v }
    m
  end
  def get(k) = self[k]
  def put(k, v) = (old = self[k]; self[k] = v; old)
  def putAll(m) = merge!(m)
  def containsKey(k) = key?(k)
  def remove(k) = delete(k)
  def isEmpty = empty?
  def keySet = AccordArrayList.new(keys)
  def to_s = concord_text(self)
end

class AccordArrayList < Array
  def self.new(src = nil) = super(src || [])
  def add(x) = (push(x); true)
  def addAll(c) = (concat(c); true)
  def get(i) = self[i]
  def set(i, v) = (old = self[i]; self[i] = v; old)
  def isEmpty = empty?
  def contains(x) = include?(x)
  def to_s = concord_text(self)
end

JAVA_SHIM = Struct.new(:util, :lang).new(
  Struct.new(:HashMap, :LinkedHashMap, :ArrayList, :LinkedList).new(AccordHashMap, AccordHashMap, AccordArrayList,
                                                                   AccordArrayList),
  nil
)

def java = JAVA_SHIM

def wrap(v)
  case v
  when Hash then AccordHashMap.new(v.transform_values { |x| wrap(x) })
  when Array then AccordArrayList.new(v.map { |x| wrap(x) })
  else v
  end
end

def plain(v, what, seen = [])
  case v
  when nil, true, false, String, Integer then v
  when Float then v.finite? ? v : nil
  when Symbol then v.to_s
  when Hash, Array
    raise TypeError, "Can't set a non-serializable #{what} -> a value that contains itself" if seen.any? { |s| s.equal?(v) }
    seen += [v]
    v.is_a?(Hash) ? v.to_h { |k, x| [k.to_s, plain(x, what, seen)] } : v.map { |x| plain(x, what, seen) }
  else
    raise TypeError, "Can't set a non-serializable #{what} -> a Ruby #{v.class} " \
                     '(use hashes, arrays, strings, numbers, booleans or nil)'
  end
end

class LogWriter
  def initialize(level) = (@level = level; @buf = +'')
  def write(*parts)
    parts.each { |p| @buf << p.to_s }
    while (i = @buf.index("\n"))
      proto_send({ op: 'log', level: @level, msg: @buf[0...i] })
      @buf = @buf[(i + 1)..]
    end
    parts.sum { |p| p.to_s.bytesize }
  end
  def flush
    proto_send({ op: 'log', level: @level, msg: @buf }) unless @buf.empty?
    @buf = +''
    self
  end
  def sync = true
  def sync=(_); end
end

class Variables
  TYPES = { 'String' => [String, 'java.lang.String'], 'Int' => [Integer, 'java.lang.Integer'],
            'Long' => [Integer, 'java.lang.Long'], 'Number' => [Numeric, 'java.lang.Number'],
            'Boolean' => [[TrueClass, FalseClass], 'java.lang.Boolean'], 'Map' => [Hash, 'java.util.Map'],
            'List' => [Array, 'java.util.List'], 'Collection' => [Array, 'java.util.Collection'] }.freeze

  def initialize(vars) = (@v = vars)
  def get(n, d = nil) = @v.key?(n) ? @v[n] : d
  def has(n) = @v.key?(n)
  def toMap = AccordHashMap.new(@v)
  def set(n, value)
    value = plain(value, "local variable: #{n}")
    proto_send({ op: 'set', name: n.to_s, value: value })
    @v[n.to_s] = wrap(value)
  end
  def remove(n) = (set(n, nil); @v.delete(n))

  TYPES.each do |kind, (classes, java_name)|
    define_method("get#{kind}") do |n, d = nil|
      v = @v[n]
      next d if v.nil?
      unless Array(classes).any? { |c| v.is_a?(c) }
        raise ArgumentError, "Invalid variable '#{n}' type, expected: #{java_name}, got: #{v.class}"
      end
      v
    end
    define_method("assert#{kind}") do |n|
      send("get#{kind}", n) || raise(ArgumentError, "Mandatory variable '#{n}' is required")
    end
  end
end

class Context
  def initialize(msg, vars) = (@m = msg; @vars = vars)
  def variables = @vars
  def getVariable(n) = @vars.get(n)
  def setVariable(n, v) = @vars.set(n, v)
  def hasVariable(n) = @vars.has(n)
  def removeVariable(n) = @vars.remove(n)
  def processInstanceId = @m['instanceId']
  def workingDirectory = @m['workDir']
  def to_s = 'Context'
end

class TaskHandle < BasicObject
  def initialize(name, ctx) = (@name = name; @ctx = ctx)
  def method_missing(method, *args)
    args = args.reject { |a| a.equal?(@ctx) }.each_with_index.map do |a, i|
      ::Kernel.send(:plain, a, "argument #{i + 1} of #{@name}.#{method}()")
    end
    ::Kernel.send(:proto_send, { op: 'task', task: @name, method: method.to_s, args: args })
    m = nil
    m = ::Kernel.send(:proto_receive) until m && m['op'] == 'reply'
    ::Kernel.raise ::RuntimeError, m['error'] unless m['ok']
    ::Kernel.send(:wrap, m['value'])
  end
  def respond_to_missing?(*) = true
end

class Tasks
  def initialize(ctx) = (@ctx = ctx)
  def get(name) = TaskHandle.new(name.to_s, @ctx)
end

class Log
  def self.format(fmt, args)
    i = -1
    fmt.to_s.gsub('{}') { i += 1; i < args.size ? concord_text(args[i]) : '{}' }
  end
  { info: 'INFO', warn: 'WARN', error: 'ERROR', debug: 'DEBUG', trace: 'DEBUG' }.each do |name, level|
    define_method(name) { |fmt, *args| proto_send({ op: 'log', level: level, msg: Log.format(fmt, args) }) }
  end
end

class Result
  attr_reader :items
  def initialize = (@items = {})
  def set(k, v) = (@items[k.to_s] = plain(v, "result value: #{k}"); self)
end

def error_text(e, name)
  line = nil
  if e.is_a?(SyntaxError)
    line = e.message[/#{Regexp.escape(name)}:(\d+)/, 1]
  else
    loc = (e.backtrace_locations || []).find { |l| l.path == name }
    line = loc&.lineno
  end
  msg = e.is_a?(SyntaxError) ? e.message.sub(/\A#{Regexp.escape(name)}:\d+: /, '').lines.first.to_s.strip : e.message
  where = line ? " (#{name == 'script' ? '' : "#{name}, "}line #{line})" : ''
  "#{e.class}: #{msg}#{where}"
end

def run_script(msg)
  name = msg['name'] || 'script'
  vars = (msg['vars'] || {}).transform_values { |v| wrap(v) }
  variables = Variables.new(vars)
  ctx = Context.new(msg, variables)
  result = Result.new
  b = TOPLEVEL_BINDING.dup
  bound = vars.merge('execution' => ctx, 'context' => ctx, 'tasks' => Tasks.new(ctx), 'log' => Log.new,
                     'result' => result, 'isDryRun' => msg['dryRun'] ? true : false)
  bound.each { |k, v| b.local_variable_set(k, v) if k.match?(/\A[a-z_][A-Za-z0-9_]*\z/) }
  # JRuby's JSR-223 bindings are also reachable as globals
  $execution = ctx
  $tasks = bound['tasks']
  $log = bound['log']
  $result = result
  out = LogWriter.new('INFO')
  err = LogWriter.new('ERROR')
  saved = [$stdout, $stderr]
  $stdout = out
  $stderr = err
  begin
    eval(msg['body'], b, name, 1)
    reply = { op: 'done', result: result.items }
  rescue Exception => e # rubocop:disable Lint/RescueException -- the script's own errors, exit included
    reply = { op: 'error', message: error_text(e, name) }
  ensure
    $stdout, $stderr = saved
    out.flush
    err.flush
  end
  proto_send(reply)
end

$stdout.reopen($stderr)
loop do
  m = proto_receive
  run_script(m) if m['op'] == 'run'
end
