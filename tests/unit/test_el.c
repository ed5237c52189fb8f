/* Unit tests for the expression language: a table of templates and their expected
 * results, evaluated against a small variable map and two fake tasks.
 *
 * Expected results are "<kind>:<Java print>": L long, D double, S string, B boolean,
 * N null, A list, M map; "E:<text>" an error whose message contains text; "T:<text>" a
 * user error (EL_THROWN) whose message is exactly text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "base/buf.h"
#include "base/limits.h"
#include "base/rand.h"
#include "base/str.h"
#include "flow/el/el.h"
#include "flow/value.h"

struct case_ {
	const char *tmpl;
	const char *want;
};

static const struct case_ literals[] = {
    {"${1}", "L:1"},
    {"${-5}", "L:-5"},
    {"${1.5}", "D:1.5"},
    {"${1e3}", "D:1000.0"},
    {"${.5}", "D:0.5"},
    {"${'abc'}", "S:abc"},
    {"${\"dq\"}", "S:dq"},
    {"${'it\\'s'}", "S:it's"},
    {"${\"say \\\"hi\\\"\"}", "S:say \"hi\""},
    {"${'a\\\\b'}", "S:a\\b"},
    {"${true}", "B:true"},
    {"${false}", "B:false"},
    {"${null}", "N:null"},
    {"${[1, 2, 3]}", "A:[1, 2, 3]"},
    {"${[]}", "A:[]"},
    {"${{'a': 1, 'b': [1, 2]}}", "M:{a=1, b=[1, 2]}"},
    {"${{1, 2, 2, 3}}", "A:[1, 2, 3]"},
    {"${{}}", "A:[]"},
    {"${[1, 'two', null, 2.5]}", "A:[1, two, null, 2.5]"},
    {"${9223372036854775807}", "L:9223372036854775807"},
    {"${[[1], {'k': {'n': null}}]}", "A:[[1], {k={n=null}}]"},
    {"${{'a': i, s: 2}}", "M:{a=5, Hello=2}"},
};

static const struct case_ arithmetic[] = {
    {"${1 + 2}", "L:3"},
    {"${10 / 4}", "D:2.5"},
    {"${7 / 7}", "D:1.0"},
    {"${10 div 4}", "D:2.5"},
    {"${7 % 3}", "L:1"},
    {"${7 mod 3}", "L:1"},
    {"${-7 % 3}", "L:-1"},
    {"${7.5 % 2}", "D:1.5"},
    {"${2 * 3}", "L:6"},
    {"${2 * 1.5}", "D:3.0"},
    {"${5 - 7}", "L:-2"},
    {"${0.1 + 0.2}", "D:0.30000000000000004"},
    {"${'1' + 2}", "L:3"},
    {"${'1.5' + 1}", "D:2.5"},
    {"${'abc' + 1}", "E:For input string: \"abc\""},
    {"${null + 1}", "L:1"},
    {"${null + null}", "L:0"},
    {"${null / null}", "L:0"},
    {"${true + 1}", "E:Cannot convert true of type class java.lang.Boolean to Number"},
    {"${[1] + 1}", "E:Cannot convert [1] of type class java.util.ArrayList to Number"},
    {"${1 / 0}", "E:not a finite number"},
    {"${1 % 0}", "E:/ by zero"},
    {"${9223372036854775807 + 1}", "L:-9223372036854775808"},
    {"${i + 1}", "L:6"},
    {"${i * d}", "D:12.5"},
    {"${-i}", "L:-5"},
    {"${-d}", "D:-2.5"},
    {"${-'3'}", "L:-3"},
    {"${-'1.5'}", "D:-1.5"},
    {"${-null}", "L:0"},
    {"${- -3}", "L:3"},
    {"${-true}", "E:Cannot convert [true] of type [class java.lang.Boolean] to [class java.lang.Number]"},
    {"${1 + 2 * 3}", "L:7"},
    {"${(1 + 2) * 3}", "L:9"},
    {"${10 - 2 - 3}", "L:5"},
    {"${100 / 10 / 2}", "D:5.0"},
    {"${numstr * 2}", "L:84"},
    {"${fstr * 2}", "D:3.0"},
    {"${'' + 1}", "L:1"},
    {"${1e10}", "D:1.0E10"},
    {"${1.0E-5 * 1}", "D:1.0E-5"},
    {"${0.001 * 1}", "D:0.001"},
    {"${1234567.0 * 10}", "D:1.234567E7"},
    {"${100.0 * 1}", "D:100.0"},
    {"${10 / 3}", "D:3.3333333333333335"},
    {"${-0.0}", "D:-0.0"},
    {"${1e21 * 1}", "D:1.0E21"},
    {"${0.0001 * 1}", "D:1.0E-4"},
    {"${9999999.0 + 0}", "D:9999999.0"},
    {"${123.456 + 0}", "D:123.456"},
    {"${5 mod 2.0}", "D:1.0"},
    {"${-9223372036854775807 - 2}", "L:9223372036854775807"},
    {"${6 div 3}", "D:2.0"},
};

static const struct case_ comparison[] = {
    {"${1 < 2}", "B:true"},
    {"${2 > 1}", "B:true"},
    {"${2 <= 2}", "B:true"},
    {"${3 >= 4}", "B:false"},
    {"${1 lt 2}", "B:true"},
    {"${2 gt 1}", "B:true"},
    {"${2 le 2}", "B:true"},
    {"${3 ge 4}", "B:false"},
    {"${1 == 1}", "B:true"},
    {"${1 eq 1}", "B:true"},
    {"${1 != 2}", "B:true"},
    {"${1 ne 1}", "B:false"},
    {"${x == '123'}", "B:true"},
    {"${'true' == true}", "B:true"},
    {"${'yes' == true}", "B:false"},
    {"${null == ''}", "B:false"},
    {"${null == null}", "B:true"},
    {"${n == null}", "B:true"},
    {"${1 == 1.0}", "B:true"},
    {"${'a' < 'b'}", "B:true"},
    {"${'abc' == 'abc'}", "B:true"},
    {"${'10' < 9}", "B:false"},
    {"${'10' < '9'}", "B:true"},
    {"${3 > 2 > 1}", "E:Cannot convert [true] of type [class java.lang.Boolean] to [class java.lang.Long]"},
    {"${null < 1}", "B:false"},
    {"${null <= null}", "B:true"},
    {"${1 == 'abc'}", "E:Cannot convert [abc] of type [class java.lang.String] to [class java.lang.Long]"},
    {"${true == 1}", "E:Cannot convert [true]"},
    {"${list == [1, 2, 3]}", "B:true"},
    {"${m == m}", "B:true"},
    {"${[1] == [1.0]}", "B:false"},
    {"${t < f}", "B:false"},
    {"${'b' > 'a'}", "B:true"},
    {"${2.5 > 2}", "B:true"},
    {"${x > 5}", "B:true"},
    {"${m < m}", "E:Cannot compare [{a=1, b={c=deep}, nul=null}] to [{a=1, b={c=deep}, nul=null}]"},
    {"${'1.5' == 1.5}", "B:true"},
    {"${s == 'Hello'}", "B:true"},
    {"${s eq 'hello'}", "B:false"},
    {"${d >= 2.5}", "B:true"},
};

static const struct case_ logic[] = {
    {"${true && false}", "B:false"},
    {"${true and true}", "B:true"},
    {"${false || true}", "B:true"},
    {"${false or false}", "B:false"},
    {"${!true}", "B:false"},
    {"${not false}", "B:true"},
    {"${!str_true}", "B:false"},
    {"${!n}", "B:true"},
    {"${false && undefinedVar}", "B:false"},
    {"${true || undefinedVar}", "B:true"},
    {"${1 && true}", "E:Cannot convert [1] of type [class java.lang.Long] to [class java.lang.Boolean]"},
    {"${'true' && 'TRUE'}", "B:true"},
    {"${!empty_s}", "B:true"},
    {"${empty null}", "B:true"},
    {"${empty ''}", "B:true"},
    {"${empty []}", "B:true"},
    {"${empty {}}", "B:true"},
    {"${empty m}", "B:false"},
    {"${empty empty_m}", "B:true"},
    {"${empty 0}", "B:false"},
    {"${empty s}", "B:false"},
    {"${not empty list}", "B:true"},
    {"${empty n}", "B:true"},
    {"${empty m.missing}", "B:true"},
    {"${t ? 'yes' : 'no'}", "S:yes"},
    {"${f ? 1 : 2}", "L:2"},
    {"${i > 3 ? 'big' : 'small'}", "S:big"},
    {"${n ? 1 : 2}", "L:2"},
    {"${f ? 1 : t ? 2 : 3}", "L:2"},
    {"${1 ? 2 : 3}", "E:Cannot convert [1]"},
    {"${t ? undefinedVar2 == null : 0}", "E:Can't find a variable 'undefinedVar2'"},
    {"${f ? undefinedVar2 : 'safe'}", "S:safe"},
    {"${'a' += 'b'}", "S:ab"},
    {"${'a' += 1 += 'b'}", "S:a1b"},
    {"${'x' += null}", "E:Cannot concatenate a null value"},
    {"${1 += 2}", "S:12"},
    {"${'v=' += d}", "S:v=2.5"},
    {"${'m=' += m}", "S:m={a=1, b={c=deep}, nul=null}"},
    {"${s += ' ' += 'World'}", "S:Hello World"},
    {"${'n' += 1 + 2}", "S:n3"},
    {"${true and not false or false}", "B:true"},
};

static const struct case_ access[] = {
    {"${m.a}", "L:1"},
    {"${m['a']}", "L:1"},
    {"${m.b.c}", "S:deep"},
    {"${m['b']['c']}", "S:deep"},
    {"${m.missing}", "N:null"},
    {"${m.missing.deeper}", "N:null"},
    {"${list[0]}", "L:1"},
    {"${list[5]}", "N:null"},
    {"${list[-1]}", "N:null"},
    {"${list['1']}", "L:2"},
    {"${items[1].name}", "S:two"},
    {"${s.foo}", "E:Property [foo] not found on type [java.lang.String]"},
    {"${n.foo}", "N:null"},
    {"${m.nul}", "N:null"},
    {"${undefinedVar}", "E:while evaluating expression '${undefinedVar}': Can't find a variable 'undefinedVar'. "
			"Check if it is defined in the current scope. Details: ELResolver cannot handle a null "
			"base Object with identifier 'undefinedVar'"},
    {"${s.empty}", "B:false"},
    {"${list.size}", "E:For input string: \"size\""},
    {"${m.size}", "N:null"},
    {"${i.foo}", "E:Property [foo] not found on type [java.lang.Long]"},
    {"${{'k': 'v'}.k}", "S:v"},
    {"${[10, 20][1]}", "L:20"},
    {"${m[null]}", "N:null"},
    {"${m[k]}", "L:1"},
    {"${items[0]['name']}", "S:one"},
    {"${m.b}", "M:{c=deep}"},
    {"${{1: 'one'}[1]}", "S:one"},
    {"${aVar.x = aVar.x + 1}", "L:2"},
    {"${(aVar.x = 5) + aVar.x}", "L:10"},
    {"${m['new'] = 'v'}", "S:v"},
    {"${(m.b.c = 'changed') == m.b.c}", "B:true"},
    {"${list[1] = 'b'}", "S:b"},
    {"${list[7] = 'b'}", "E:Index 7 out of bounds for length 3"},
    {"${n.x = 1}", "E:Target Unreachable"},
    {"${s.x = 1}", "E:Property [x] not writable on type [java.lang.String]"},
    {"${(y = 42) + y}", "L:84"},
    {"${m.self = m}", "E:cannot store a collection inside itself"},
    {"${shadow.x}", "L:1"},
};

static const struct case_ strings[] = {
    {"${s.toUpperCase()}", "S:HELLO"},
    {"${s.toLowerCase()}", "S:hello"},
    {"${'  x  '.trim()}", "S:x"},
    {"${s.length()}", "L:5"},
    {"${s.substring(1)}", "S:ello"},
    {"${s.substring(1, 3)}", "S:el"},
    {"${s.substring(3, 1)}", "E:begin 3, end 1, length 5"},
    {"${s.contains('ell')}", "B:true"},
    {"${s.startsWith('He')}", "B:true"},
    {"${s.endsWith('lo')}", "B:true"},
    {"${s.replace('l', 'L')}", "S:HeLLo"},
    {"${'abc'.replace('', '-')}", "S:-a-b-c-"},
    {"${'a.b.c'.replaceAll('\\\\.', '-')}", "S:a-b-c"},
    {"${'a1b22c'.replaceAll('[0-9]+', '#')}", "S:a#b#c"},
    {"${'abc'.replaceAll('x*', '-')}", "S:-a-b-c-"},
    {"${'2024-01-02'.replaceAll('(\\\\d+)-(\\\\d+)-(\\\\d+)', '$3/$2/$1')}", "S:02/01/2024"},
    {"${'a b\tc'.replaceAll('\\\\s', '_')}", "S:a_b_c"},
    {"${'abc123'.matches('[a-z]+\\\\d+')}", "B:true"},
    {"${'abc'.matches('b')}", "B:false"},
    {"${'ABC'.matches('(?i)abc')}", "B:true"},
    {"${'a,b,,c,,'.split(',')}", "A:[a, b, , c]"},
    {"${'a,b'.split(',')[1]}", "S:b"},
    {"${'a1b2c3'.split('\\\\d')}", "A:[a, b, c]"},
    {"${'abc'.split('')}", "A:[a, b, c]"},
    {"${',a'.split(',')}", "A:[, a]"},
    {"${''.split(',')}", "A:[]"},
    {"${s.indexOf('l')}", "L:2"},
    {"${s.lastIndexOf('l')}", "L:3"},
    {"${s.indexOf('z')}", "L:-1"},
    {"${s.indexOf('l', 3)}", "L:3"},
    {"${s.equals('Hello')}", "B:true"},
    {"${s.equals(1)}", "B:false"},
    {"${s.isEmpty()}", "B:false"},
    {"${empty_s.isEmpty()}", "B:true"},
    {"${s.concat('!')}", "S:Hello!"},
    {"${s.charAt(1)}", "S:e"},
    {"${s.equalsIgnoreCase('HELLO')}", "B:true"},
    {"${s.foo()}", "E:Can't find 'foo()' method in java.lang.String"},
    {"${'h\xc3\xa9llo'.length()}", "L:5"},
    {"${'h\xc3\xa9llo'.substring(1, 2)}", "S:\xc3\xa9"},
    {"${'h\xc3\xa9llo'.toUpperCase()}", "S:H\xc3\xa9LLO"},
    {"${s.compareTo('Hello')}", "L:0"},
    {"${'  '.isBlank()}", "B:true"},
    {"${s.toString()}", "S:Hello"},
    {"${'a(b'.matches('a(b')}", "E:invalid regular expression"},
    {"${'aa'.matches('(a)\\\\1')}", "E:back references are not supported"},
    {"${'x'.replaceAll('x', '$')}", "E:Illegal group reference"},
    {"${'a.b'.split('.')}", "A:[]"},
    {"${'a.b'.split('\\\\.')}", "A:[a, b]"},
    {"${'a'.matches('a{99999999999999999999}')}", "E:counted repetition too large"},
    {"${'aaa'.matches('a{1,3}')}", "B:true"},
    {"${'a'.matches('(a{1})(a{1})(a{1})')}", "E:too many counted repetitions"},
    {"${'a'.matches('a**')}", "E:Dangling meta character"},
    {"${'a'.matches('*a')}", "E:Dangling meta character"},
    {"${'ac'.split('\\\\]\\\\++++++++++++++++')}", "E:Dangling meta character"},
    {"${'aaa'.matches('a+?')}", "B:true"},
    {"${'abba'.matches('(?:a|b)+')}", "B:true"},
    {"${'a+b'.split('\\\\+')}", "A:[a, b]"},
    {"${'x1y'.replaceAll('[\\\\d]', '')}", "S:xy"},
};

static const struct case_ collections[] = {
    {"${list.size()}", "L:3"},
    {"${list.contains(2)}", "B:true"},
    {"${list.contains(5)}", "B:false"},
    {"${list.isEmpty()}", "B:false"},
    {"${list.get(0)}", "L:1"},
    {"${list.get(9)}", "E:Index 9 out of bounds for length 3"},
    {"${list.indexOf(3)}", "L:2"},
    {"${list.add(4)}", "B:true"},
    {"${list.add(4) ? list : 0}", "A:[1, 2, 3, 4]"},
    {"${list.add(0, 0) == null ? list : 0}", "A:[0, 1, 2, 3]"},
    {"${list.subList(1, 3)}", "A:[2, 3]"},
    {"${list.remove(0) + list.size()}", "L:3"},
    {"${list.addAll([4, 5]) ? list.size() : 0}", "L:5"},
    {"${list.toString()}", "S:[1, 2, 3]"},
    {"${list.set(0, 9) + list[0]}", "L:10"},
    {"${list.add(list)}", "E:cannot store a collection inside itself"},
    {"${list.stream().count()}", "L:3"},
    {"${list.foo()}", "E:Can't find 'foo()' method in java.util.ArrayList"},
    {"${m.containsKey('a')}", "B:true"},
    {"${m.containsKey('z')}", "B:false"},
    {"${m.get('a')}", "L:1"},
    {"${m.get('z')}", "N:null"},
    {"${m.getOrDefault('z', 7)}", "L:7"},
    {"${m.keySet()}", "A:[a, b, nul]"},
    {"${m.values()}", "A:[1, {c=deep}, null]"},
    {"${m.size()}", "L:3"},
    {"${m.isEmpty()}", "B:false"},
    {"${m.put('z', 26)}", "N:null"},
    {"${m.put('a', 2) + m.a}", "L:3"},
    {"${m.entrySet()[0].key}", "S:a"},
    {"${m.entrySet()[1].value}", "M:{c=deep}"},
    {"${m.remove('a')}", "L:1"},
    {"${m.containsValue(1)}", "B:true"},
    {"${m.foo()}", "E:Can't find 'foo()' method in java.util.LinkedHashMap"},
    {"${m.put('k', 1) == null ? m : 0}", "M:{a=1, b={c=deep}, nul=null, k=1}"},
    {"${i.toString()}", "S:5"},
    {"${d.intValue()}", "L:2"},
    {"${i.doubleValue()}", "D:5.0"},
    {"${t.toString()}", "S:true"},
    {"${(3000000000).intValue()}", "L:-1294967296"},
    {"${i.foo()}", "E:Can't find 'foo()' method in java.lang.Long"},
    {"${n.foo()}", "N:null"},
    {"${i.compareTo(7)}", "L:-1"},
};

static const struct case_ streams[] = {
    {"${list.stream().filter(x -> x > 1).toList()}", "A:[2, 3]"},
    {"${list.stream().map(x -> x * 2).toList()}", "A:[2, 4, 6]"},
    {"${items.stream().filter(i -> i.name.equals('one')).toList()}", "A:[{name=one, v=1}]"},
    {"${items.stream().map(v -> v.v).sorted().toList()}", "A:[1, 2]"},
    {"${[cloud1, cloud2].stream().flatMap(p -> p.stream()).toList()}", "A:[1, 2, 3]"},
    {"${[3, 1, 2].stream().sorted().toList()}", "A:[1, 2, 3]"},
    {"${[3, 1, 2].stream().sorted((a, b) -> b - a).toList()}", "A:[3, 2, 1]"},
    {"${[1, 1, 2].stream().distinct().toList()}", "A:[1, 2]"},
    {"${list.stream().limit(2).toList()}", "A:[1, 2]"},
    {"${list.stream().substream(1).toList()}", "A:[2, 3]"},
    {"${list.stream().substream(0, 1).toList()}", "A:[1]"},
    {"${list.stream().sum()}", "L:6"},
    {"${[1.5, 2].stream().sum()}", "D:3.5"},
    {"${list.stream().average().get()}", "D:2.0"},
    {"${list.stream().max().get()}", "L:3"},
    {"${list.stream().min().get()}", "L:1"},
    {"${list.stream().reduce((a, b) -> a + b).get()}", "L:6"},
    {"${list.stream().reduce(10, (a, b) -> a + b)}", "L:16"},
    {"${list.stream().anyMatch(i -> i == 2).get()}", "B:true"},
    {"${list.stream().allMatch(i -> i > 0).get()}", "B:true"},
    {"${list.stream().noneMatch(i -> i > 2).get()}", "B:false"},
    {"${list.stream().findFirst().get()}", "L:1"},
    {"${empty_l.stream().findFirst().orElse('none')}", "S:none"},
    {"${empty_l.stream().findFirst().get()}", "E:No value present"},
    {"${items.stream().filter(i -> i.v == 42).findFirst().orElseGet(() -> throw('42 not found'))}", "T:42 not found"},
    {"${list.stream().filter(i -> i == 2).findFirst().orElseGet(() -> 0)}", "L:2"},
    {"${empty_l.stream().average().orElse(0)}", "L:0"},
    {"${empty_l.stream().findFirst().isPresent()}", "B:false"},
    {"${(x -> x + 1)(5)}", "L:6"},
    {"${((a, b) -> a * b)(3, 4)}", "L:12"},
    {"${(() -> 7)()}", "L:7"},
    {"${((a, b) -> a)(1)}", "E:Only [1] arguments were provided for a lambda expression that requires at least [2]"},
    {"${list.stream().map(x -> list.stream().map(y -> x * y).toList()).toList()}",
     "A:[[1, 2, 3], [2, 4, 6], [3, 6, 9]]"},
    {"${(x -> y -> x + y)(1)(2)}", "L:3"},
    {"${(f -> f(2))(x -> x * 3)}", "L:6"},
    {"${list.stream().x}", "E:Property [x] not found on type [jakarta.el.stream.Stream]"},
    {"${list.stream().findFirst().x}", "E:Property [x] not found on type [jakarta.el.stream.Optional]"},
    {"${(f -> f(2))(5)}", "E:Function 'f' not found"},
    {"${(x -> (x = 1))(2)}", "E:cannot assign to the lambda parameter 'x'"},
    {"${list.stream().forEach(x -> x)}", "N:null"},
    {"${list.stream().peek(x -> x).count()}", "L:3"},
    {"${list.stream().map(x -> y -> x).toList()}", "E:a lambda expression cannot be used as a value"},
    {"${x -> x}", "E:a lambda expression cannot be used as a value"},
    {"${list.stream()}", "A:[1, 2, 3]"},
    {"${list.stream().findFirst()}", "L:1"},
    {"${names.stream().sorted().toList()}", "A:[one, three, two]"},
    {"${items.stream().sorted((a, b) -> b.v - a.v).map(i -> i.name).toList()}", "A:[two, one]"},
    {"${['b', 1].stream().sorted().toList()}", "E:Cannot compare [1] to [b]"},
    {"${list.stream().filter(x -> x).toList()}", "E:Cannot convert [1] of type [class java.lang.Long]"},
    {"${list.stream().foo()}", "E:Can't find 'foo()' method in jakarta.el.stream.Stream"},
    {"${list.stream().map(i -> i + x).toList()}", "A:[124, 125, 126]"},
    {"${items.stream().map(i -> i.name.toUpperCase()).toList()}", "A:[ONE, TWO]"},
    {"${list.stream().map(x -> x * 1.5).toList()}", "A:[1.5, 3.0, 4.5]"},
    {"${names.stream().anyMatch(n -> n == 'two').orElse(false)}", "B:true"},
    {"${m.keySet().stream().map(k -> k += '!').toList()}", "A:[a!, b!, nul!]"},
    {"${list.stream().filter(i -> i > 5).toList()}", "A:[]"},
    {"${list.stream().map(x -> throw('bad ' += x)).toList()}", "T:bad 1"},
    {"${items.stream().filter(i -> i.v > 1).findFirst().get().name}", "S:two"},
    {"${list.stream().sorted((a, b) -> 'x').toList()}", "E:Cannot convert [x]"},
};

static const struct case_ functions[] = {
    {"${hasVariable('m.b.c')}", "B:true"},
    {"${hasVariable('m.b.zz')}", "B:false"},
    {"${hasVariable('nope')}", "B:false"},
    {"${hasVariable('n')}", "B:true"},
    {"${hasNonNullVariable('n')}", "B:false"},
    {"${hasNonNullVariable('m.a')}", "B:true"},
    {"${hasNonNullVariable('m.nul')}", "B:false"},
    {"${orDefault('nope', 'dflt')}", "S:dflt"},
    {"${orDefault('m.a', 0)}", "L:1"},
    {"${orDefault('m.nul', 0)}", "N:null"},
    {"${uuid().length()}", "L:36"},
    {"${uuid() == uuid()}", "B:false"},
    {"${throw('boom')}", "T:boom"},
    {"${currentFlowName()}", "S:default"},
    {"${isDebug()}", "B:false"},
    {"${unknownFn()}", "E:Function 'unknownFn' not found"},
    {"${allVariables().i}", "L:5"},
    {"${vmFail()}", "E:while evaluating expression '${vmFail()}': the VM says no"},
    {"${String.valueOf(5)}", "S:5"},
    {"${String.valueOf(null)}", "S:null"},
    {"${String.valueOf(d)}", "S:2.5"},
    {"${Integer.parseInt('42') + 1}", "L:43"},
    {"${Integer.parseInt('x')}", "E:For input string: \"x\""},
    {"${Integer.parseInt('3000000000')}", "E:For input string: \"3000000000\""},
    {"${Math.max(1, 2)}", "L:2"},
    {"${Math.max(1, 2.5)}", "D:2.5"},
    {"${Math.min(-1, 2)}", "L:-1"},
    {"${Math.abs(-3)}", "L:3"},
    {"${Math.abs(-2.5)}", "D:2.5"},
    {"${Math.floor(2.7)}", "D:2.0"},
    {"${Math.ceil(2.1)}", "D:3.0"},
    {"${Math.round(2.5)}", "L:3"},
    {"${Math.round(-2.5)}", "L:-2"},
    {"${Math.pow(2, 10)}", "D:1024.0"},
    {"${Math.sqrt(16)}", "D:4.0"},
    {"${Long.MAX_VALUE}", "L:9223372036854775807"},
    {"${Integer.MAX_VALUE}", "L:2147483647"},
    {"${Math.PI}", "D:3.141592653589793"},
    {"${Boolean.parseBoolean('TRUE')}", "B:true"},
    {"${Double.parseDouble('1.5')}", "D:1.5"},
    {"${Long.parseLong('-7')}", "L:-7"},
    {"${String.join('-', names)}", "S:one-two-three"},
    {"${String.join(', ', 'a', 'b')}", "S:a, b"},
    {"${Math.foo(1)}", "E:Can't find 'foo()' method in java.lang.Math"},
    {"${java.lang.Math.max(1, 2)}", "E:Can't find a variable 'java'"},
    {"${Math.random() < 1.0}", "B:true"},
    {"${Math}", "E:a class cannot be used as a value"},
    {"${log.info('hi')}", "N:null"},
    {"${calc.add(2, 3)}", "L:5"},
    {"${calc.add(i, calc.add(1, 1))}", "L:7"},
    {"${calc.fail()}", "E:while evaluating expression '${calc.fail()}': task failed"},
    {"${calc.userError()}", "T:user says no"},
    {"${calc}", "E:a task cannot be used as a value"},
    {"${calc['x']}", "E:Property [x] not found on type [calc]"},
    {"${calc[null]}", "E:Property [] not found on type [calc]"},
    {"${calc.prop}", "E:Property [prop] not found on type [calc]"},
    {"${calc.add(x -> x, 1)}", "E:a lambda expression cannot be used as a value"},
};

static const struct case_ templates[] = {
    {"Hello ${s}!", "S:Hello Hello!"},
    {"${s} ${i}", "S:Hello 5"},
    {"x=${n}.", "S:x=."},
    {"${n}", "N:null"},
    {"v=${d}", "S:v=2.5"},
    {"${list}", "A:[1, 2, 3]"},
    {"l=${list}", "S:l=[1, 2, 3]"},
    {"m=${m}", "S:m={a=1, b={c=deep}, nul=null}"},
    {"\\${not evaluated}", "S:${not evaluated}"},
    {"a \\${b} ${i}", "S:a ${b} 5"},
    {"no expressions", "S:no expressions"},
    {"", "S:"},
    {"${'}'}", "S:}"},
    {"${{'a': 1}.a}", "L:1"},
    {"${i}${i}", "S:55"},
    {" ${i}", "S: 5"},
    {"${1.0 * 5}", "D:5.0"},
    {"v=${1.0 * 5}", "S:v=5.0"},
    {"${t}", "B:true"},
    {"${'$'}", "S:$"},
    {"price: $5 {x}", "S:price: $5 {x}"},
    {"${list.stream().findFirst()} first", "S:1 first"},
    {"${items}", "A:[{name=one, v=1}, {name=two, v=2}]"},
    {"${'a\\\\'}b", "S:a\\b"},
    {"multi\nline ${i}", "S:multi\nline 5"},
    {"${'\\n'}", "E:while parsing expression '${'\\n'}': Encountered"},
    {"${1 +}", "E:while parsing expression '${1 +}': Encountered \"}\" at line 1, column 6"},
    {"${}", "E:while parsing expression '${}': Encountered \"}\""},
    {"${a b}", "E:Encountered \"b\""},
    {"${(1 + 2}", "E:while parsing expression"},
    {"${x instanceof y}", "E:Encountered \"instanceof\""},
    {"${[1, 2}", "E:while parsing expression"},
    {"${unterminated", "E:Encountered \"<EOF>\""},
    {"${a; b}", "E:Encountered \";\""},
    {"${1 = 2}", "E:Encountered \"=\""},
    {"${'abc}", "E:while parsing expression"},
    {"${#}", "E:Encountered \"#\""},
    {"${1.2.3}", "E:while parsing expression"},
    {"${m.}", "E:while parsing expression"},
    {"${f(}", "E:while parsing expression"},
    {"${{'a' 1}}", "E:while parsing expression"},
    {"${a ? b}", "E:while parsing expression"},
    {"line\n${+}", "E:at line 2, column 3"},
};

/* ---- the test environment ---- */

static json_t *vars;
static int log_calls;

static int t_lookup(void *ctx, const char *name, json_t **out, struct err *e)
{
	(void)ctx;
	(void)e;
	*out = json_object_get(vars, name);
	return *out != NULL;
}

static int t_assign(void *ctx, const char *name, json_t *value, struct err *e)
{
	(void)ctx;
	return json_object_set(vars, name, value) == 0 ? 0 : err_set(e, ERR_INTERNAL, "oom");
}

static bool t_is_task(void *ctx, const char *name)
{
	(void)ctx;
	return strcmp(name, "log") == 0 || strcmp(name, "calc") == 0 || strcmp(name, "shadow") == 0;
}

static int t_call_task(void *ctx, const char *task, const char *method, json_t *args, json_t **out, struct err *e)
{
	(void)ctx;
	if (strcmp(task, "log") == 0) {
		log_calls++;
		*out = json_null();
		return 0;
	}
	if (strcmp(method, "add") == 0 && json_array_size(args) == 2) {
		*out = json_integer(json_integer_value(json_array_get(args, 0)) +
				    json_integer_value(json_array_get(args, 1)));
		return 0;
	}
	if (strcmp(method, "userError") == 0) {
		err_set(e, ERR_INVALID, "user says no");
		return EL_THROWN;
	}
	return err_set(e, ERR_INVALID, "task failed");
}

static int t_call_function(void *ctx, const struct el_env *env, const char *name, json_t *args, json_t **out,
			   struct err *e)
{
	(void)ctx;
	(void)env;
	(void)args;
	if (strcmp(name, "currentFlowName") == 0)
		*out = json_string("default");
	else if (strcmp(name, "isDebug") == 0)
		*out = json_false();
	else if (strcmp(name, "allVariables") == 0)
		*out = json_deep_copy(vars);
	else if (strcmp(name, "vmFail") == 0)
		return err_set(e, ERR_INVALID, "the VM says no");
	else
		return 0;
	return 1;
}

static const struct el_env test_env = {
    .lookup = t_lookup,
    .assign = t_assign,
    .is_task = t_is_task,
    .call_task = t_call_task,
    .call_function = t_call_function,
};

static const char *const vars_json =
    "{\"i\": 5, \"x\": 123, \"s\": \"Hello\", \"n\": null, \"t\": true, \"f\": false, \"d\": 2.5,"
    " \"list\": [1, 2, 3], \"names\": [\"one\", \"two\", \"three\"],"
    " \"m\": {\"a\": 1, \"b\": {\"c\": \"deep\"}, \"nul\": null},"
    " \"items\": [{\"name\": \"one\", \"v\": 1}, {\"name\": \"two\", \"v\": 2}],"
    " \"empty_s\": \"\", \"empty_l\": [], \"empty_m\": {}, \"numstr\": \"42\", \"fstr\": \"1.5\","
    " \"cloud1\": [1, 2], \"cloud2\": [3], \"str_true\": \"true\", \"aVar\": {\"x\": 1}, \"k\": \"a\","
    " \"shadow\": {\"x\": 1}}";

static void reset_vars(void)
{
	json_decref(vars);
	vars = json_loads(vars_json, 0, NULL);
	assert_non_null(vars);
}

static char kind_of(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_INTEGER:
		return 'L';
	case JSON_REAL:
		return 'D';
	case JSON_STRING:
		return 'S';
	case JSON_TRUE:
	case JSON_FALSE:
		return 'B';
	case JSON_ARRAY:
		return 'A';
	case JSON_OBJECT:
		return 'M';
	default:
		return 'N';
	}
}

/* Evaluates one case; returns 0 when it matched, prints the difference otherwise. */
static int run_case(const struct case_ *c)
{
	struct err e = {0};
	struct el_expr *x;
	json_t *v = NULL;
	char got[4096];
	int rc;

	reset_vars();
	x = el_parse_template(c->tmpl, strlen(c->tmpl), &e);
	rc = x ? el_eval(x, &test_env, &v, &e) : -1;
	el_free(x);
	if (rc == EL_THROWN)
		assert_int_equal(str_fmt(got, sizeof got, "T:%s", e.msg), 0);
	else if (rc < 0)
		assert_int_equal(str_fmt(got, sizeof got, "E:%s", e.msg), 0);
	else {
		char *p = value_to_cstr(v, NULL);
		assert_int_equal(str_fmt(got, sizeof got, "%c:%s", kind_of(v), p ? p : "?"), 0);
		free(p);
		json_decref(v);
	}
	if (c->want[0] == 'E' && got[0] == 'E' && strstr(got + 2, c->want + 2))
		return 0;
	if (strcmp(got, c->want) == 0)
		return 0;
	fprintf(stderr, "FAIL %s\n  want %s\n  got  %s\n", c->tmpl, c->want, got);
	return 1;
}

static int total_cases;

static void run_table(const struct case_ *cases, size_t n)
{
	size_t i, failed = 0;

	for (i = 0; i < n; i++)
		failed += (size_t)run_case(&cases[i]);
	total_cases += (int)n;
	json_decref(vars);
	vars = NULL;
	assert_int_equal(failed, 0);
}

#define TABLE_TEST(name)                                                                                               \
	static void test_##name(void **state)                                                                          \
	{                                                                                                              \
		(void)state;                                                                                           \
		run_table(name, sizeof name / sizeof name[0]);                                                         \
	}

TABLE_TEST(literals)
TABLE_TEST(arithmetic)
TABLE_TEST(comparison)
TABLE_TEST(logic)
TABLE_TEST(access)
TABLE_TEST(strings)
TABLE_TEST(collections)
TABLE_TEST(streams)
TABLE_TEST(functions)
TABLE_TEST(templates)

static void test_task_called(void **state)
{
	struct err e;
	json_t *v = NULL;
	(void)state;

	reset_vars();
	log_calls = 0;
	assert_int_equal(el_eval_template("${log.info('a')}${log.warn('b')}", 32, &test_env, &v, &e), 0);
	assert_string_equal(json_string_value(v), "");
	assert_int_equal(log_calls, 2);
	json_decref(v);
	json_decref(vars);
	vars = NULL;
}

static void test_mutation_is_visible(void **state)
{
	struct err e;
	json_t *v = NULL;
	const char *t = "${list.add(4)}";
	(void)state;

	reset_vars();
	assert_int_equal(el_eval_template(t, strlen(t), &test_env, &v, &e), 0);
	json_decref(v);
	assert_int_equal(json_array_size(json_object_get(vars, "list")), 4);
	t = "${y = {'k': [1]}}";
	assert_int_equal(el_eval_template(t, strlen(t), &test_env, &v, &e), 0);
	json_decref(v);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(json_object_get(vars, "y"), "k"), 0)), 1);
	json_decref(vars);
	vars = NULL;
}

static void test_parse_once_eval_many(void **state)
{
	struct err e;
	struct el_expr *x = el_parse("i + 1", 5, &e);
	json_t *v;
	int k;
	(void)state;

	assert_non_null(x);
	assert_true(el_is_single(x));
	reset_vars();
	for (k = 0; k < 1000; k++) {
		json_object_set_new(vars, "i", json_integer(k));
		assert_int_equal(el_eval(x, &test_env, &v, &e), 0);
		assert_int_equal(json_integer_value(v), k + 1);
		json_decref(v);
	}
	el_free(x);
	x = el_parse("undefinedVar", 12, &e);
	assert_non_null(x);
	assert_true(el_eval(x, &test_env, &v, &e) < 0);
	assert_string_equal(e.msg, "while evaluating expression '${undefinedVar}': Can't find a variable "
				   "'undefinedVar'. Check if it is defined in the current scope. Details: ELResolver "
				   "cannot handle a null base Object with identifier 'undefinedVar'");
	el_free(x);
	json_decref(vars);
	vars = NULL;
}

static void test_eval_bool(void **state)
{
	struct err e;
	struct el_expr *x;
	bool b = false;
	(void)state;

	reset_vars();
	x = el_parse_template("${i > 3}", 8, &e);
	assert_int_equal(el_eval_bool(x, &test_env, &b, &e), 0);
	assert_true(b);
	el_free(x);
	x = el_parse_template("${str_true}", 11, &e);
	assert_int_equal(el_eval_bool(x, &test_env, &b, &e), 0);
	assert_true(b);
	el_free(x);
	x = el_parse_template("${list}", 7, &e);
	assert_true(el_eval_bool(x, &test_env, &b, &e) < 0);
	assert_string_equal(e.msg, "while evaluating expression '${list}': Cannot convert [[1, 2, 3]] of type "
				   "[class java.util.ArrayList] to [class java.lang.Boolean]");
	el_free(x);
	json_decref(vars);
	vars = NULL;
}

static void test_limits(void **state)
{
	struct err e;
	struct el_expr *x;
	struct buf b;
	size_t k;
	json_t *v = NULL;
	(void)state;

	buf_init(&b, 0);
	for (k = 0; k < 200; k++)
		assert_int_equal(buf_append_char(&b, '(', &e), 0);
	assert_int_equal(buf_append_char(&b, '1', &e), 0);
	for (k = 0; k < 200; k++)
		assert_int_equal(buf_append_char(&b, ')', &e), 0);
	x = el_parse(b.data, b.len, &e);
	assert_null(x);
	assert_int_equal(e.code, ERR_LIMIT);
	assert_non_null(strstr(e.msg, "flow_expr_depth (128)"));
	buf_reset(&b);
	assert_int_equal(buf_append_str(&b, "m", &e), 0);
	for (k = 0; k < 200; k++)
		assert_int_equal(buf_append_str(&b, ".a", &e), 0);
	x = el_parse(b.data, b.len, &e);
	assert_null(x);
	assert_int_equal(e.code, ERR_LIMIT);
	buf_reset(&b);
	assert_int_equal(buf_append_str(&b, "1", &e), 0);
	for (k = 0; k < 200; k++)
		assert_int_equal(buf_append_str(&b, " + 1", &e), 0);
	x = el_parse(b.data, b.len, &e);
	assert_null(x);
	assert_int_equal(e.code, ERR_LIMIT);
	buf_reset(&b);
	assert_int_equal(buf_append_str(&b, "${list.stream()", &e), 0);
	for (k = 0; k < 16; k++)
		assert_int_equal(buf_append_str(&b, ".flatMap(a -> list.stream())", &e), 0);
	assert_int_equal(buf_append_str(&b, ".count()}", &e), 0);
	reset_vars();
	assert_true(el_eval_template(b.data, b.len, &test_env, &v, &e) < 0);
	assert_int_equal(e.code, ERR_LIMIT);
	assert_non_null(strstr(e.msg, "exceeded 5000000 steps"));
	json_decref(vars);
	vars = NULL;
	limits.flow_expr_bytes = 10;
	x = el_parse("1 + 2 + 3 + 4", 13, &e);
	assert_null(x);
	assert_int_equal(e.code, ERR_LIMIT);
	assert_non_null(strstr(e.msg, "flow_expr_bytes (10 bytes)"));
	x = el_parse_template("long text is fine ${1 + 2} here", 32, &e);
	assert_non_null(x);
	el_free(x);
	x = el_parse_template("${1 + 2 + 3 + 4}", 16, &e);
	assert_null(x);
	assert_int_equal(e.code, ERR_LIMIT);
	limits_defaults();
	buf_cleanup(&b);
}

static void test_json_values(void **state)
{
	struct err e;
	json_t *in, *out = NULL;
	struct el_json *c;
	char *p;
	(void)state;

	reset_vars();
	in = json_loads("{\"a\": \"${i}\", \"b\": [\"x ${s}\", 1, {\"c\": \"${d * 2}\"}], \"${s}\": \"k\","
			" \"plain\": {\"l\": [1, 2]}}",
			0, NULL);
	assert_non_null(in);
	c = el_json_compile(in, 0, &e);
	assert_non_null(c);
	assert_int_equal(el_json_eval(c, &test_env, &out, &e), 0);
	p = value_to_cstr(out, NULL);
	assert_string_equal(p, "{a=5, b=[x Hello, 1, {c=5.0}], ${s}=k, plain={l=[1, 2]}}");
	free(p);
	/* constant containers are copies: mutating the result leaves the compiled value alone */
	json_array_append_new(json_object_get(json_object_get(out, "plain"), "l"), json_integer(3));
	json_decref(out);
	assert_int_equal(el_json_eval(c, &test_env, &out, &e), 0);
	assert_int_equal(json_array_size(json_object_get(json_object_get(out, "plain"), "l")), 2);
	json_decref(out);
	el_json_free(c);
	assert_int_equal(el_json_eval_value(in, EL_JSON_KEYS, &test_env, &out, &e), 0);
	p = value_to_cstr(out, NULL);
	assert_string_equal(p, "{a=5, b=[x Hello, 1, {c=5.0}], Hello=k, plain={l=[1, 2]}}");
	free(p);
	json_decref(out);
	json_object_set_new(in, "bad", json_string("${nope}"));
	assert_true(el_json_eval_value(in, 0, &test_env, &out, &e) < 0);
	assert_non_null(strstr(e.msg, "Can't find a variable 'nope'"));
	json_object_set_new(in, "bad", json_string("${1 +}"));
	assert_null(el_json_compile(in, 0, &e));
	assert_non_null(strstr(e.msg, "while parsing expression '${1 +}'"));
	json_decref(in);
	json_decref(vars);
	vars = NULL;
}

static void test_path_lookup(void **state)
{
	struct err e;
	json_t *v = NULL;
	(void)state;

	reset_vars();
	assert_int_equal(el_path_lookup(&test_env, "m.b.c", 5, &v, &e), 1);
	assert_string_equal(json_string_value(v), "deep");
	assert_int_equal(el_path_lookup(&test_env, "m.b.c.d", 7, &v, &e), 0);
	assert_int_equal(el_path_lookup(&test_env, "zz", 2, &v, &e), 0);
	assert_int_equal(el_path_lookup(&test_env, "n", 1, &v, &e), 1);
	assert_true(json_is_null(v));
	assert_true(el_has_template("a ${b}", 6));
	assert_true(el_has_template("a \\${b}", 7));
	assert_false(el_has_template("a $ {b}", 7));
	assert_false(el_has_template("", 0));
	json_decref(vars);
	vars = NULL;
}

static int th_lookup(void *ctx, const char *name, json_t **out, struct err *e)
{
	(void)e;
	*out = json_object_get(ctx, name);
	return *out != NULL;
}

static void *eval_thread(void *arg)
{
	const struct el_expr *x = arg;
	json_t *own = json_pack("{s:i, s:[i, i, i]}", "i", 0, "list", 1, 2, 3), *v;
	struct el_env env = {.ctx = own, .lookup = th_lookup};
	struct err e;
	long k, bad = 0;

	for (k = 0; k < 2000; k++) {
		json_object_set_new(own, "i", json_integer(k));
		if (el_eval(x, &env, &v, &e) != 0 || json_integer_value(v) != k + 6 + 'a')
			bad++;
		json_decref(v);
	}
	json_decref(own);
	return (void *)bad;
}

/* One parsed expression evaluated by several threads at once, each with its own env. */
static void test_concurrent_eval(void **state)
{
	const char *t = "${i + list.stream().map(x -> x * 1).sum() + {'k': 'a'}.k.charAt(0).length() * 0 + 97}";
	struct err e;
	struct el_expr *x = el_parse_template(t, strlen(t), &e);
	pthread_t th[4];
	void *bad;
	int k;
	(void)state;

	assert_non_null(x);
	for (k = 0; k < 4; k++)
		assert_int_equal(pthread_create(&th[k], NULL, eval_thread, x), 0);
	for (k = 0; k < 4; k++) {
		assert_int_equal(pthread_join(th[k], &bad), 0);
		assert_null(bad);
	}
	el_free(x);
}

/* el_regex_match: Java's matches() and group(1), past (?: groups, escaped and bracketed
 * parentheses. */
static void test_regex_match(void **state)
{
	static const struct {
		const char *re, *s;
		bool matched;
		const char *group;
	} cases[] = {
	    {"feat: (.*)", "feat: thing", true, "thing"},
	    {"feat: (.*)", "fix: thing", false, NULL},
	    {"feat", "feat: thing", false, NULL}, /* the whole string must match */
	    {"(?:fix|feat): (.*)", "fix: bug 7", true, "bug 7"},
	    {"\\((x+)\\) .*", "(xx) y", true, "xx"},
	    {"[(](y)", "(y", true, "y"},
	    {"a(b)?c", "ac", true, NULL}, /* the group took no part */
	    {"no group", "no group", true, NULL},
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct err e = {0};
		bool matched;
		char *group = NULL;
		assert_int_equal(el_regex_match(cases[i].re, cases[i].s, &matched, &group, &e), 0);
		assert_int_equal(matched, cases[i].matched);
		if (cases[i].group)
			assert_string_equal(group, cases[i].group);
		else
			assert_null(group);
		free(group);
	}
	struct err e = {0};
	bool matched;
	char *group;
	assert_int_equal(el_regex_match("(?<name>x)", "x", &matched, &group, &e), -1);
	assert_non_null(strstr(e.msg, "not supported"));
}

static void test_count(void **state)
{
	(void)state;
	/* the tables above hold at least 200 expressions */
	assert_true(total_cases >= 200);
	printf("el: %d table expressions\n", total_cases);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_literals),
	    cmocka_unit_test(test_arithmetic),
	    cmocka_unit_test(test_comparison),
	    cmocka_unit_test(test_logic),
	    cmocka_unit_test(test_access),
	    cmocka_unit_test(test_strings),
	    cmocka_unit_test(test_collections),
	    cmocka_unit_test(test_streams),
	    cmocka_unit_test(test_functions),
	    cmocka_unit_test(test_templates),
	    cmocka_unit_test(test_task_called),
	    cmocka_unit_test(test_mutation_is_visible),
	    cmocka_unit_test(test_parse_once_eval_many),
	    cmocka_unit_test(test_eval_bool),
	    cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_json_values),
	    cmocka_unit_test(test_path_lookup),
	    cmocka_unit_test(test_concurrent_eval),
	    cmocka_unit_test(test_regex_match),
	    cmocka_unit_test(test_count),
	};
	rand_init();
	limits_defaults();
	return cmocka_run_group_tests_name("el", tests, NULL, NULL);
}
