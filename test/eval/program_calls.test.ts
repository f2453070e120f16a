import { ProgramCalls, type LineCalls } from '../../src/eval/program_calls';

const PROGRAM = `class Counter:
    def __init__(self, k):
        self.k = k

    def add(self, n):
        self.k += n
        return self.k

def helper(x):
    y = x * 2
    return y

def deeper(x):
    return leaf(x) + 1

def leaf(x):
    z = x - 1
    return z

def gen(xs):
    for v in xs:
        yield v + 1

def f(xs, n):
    total = 0
    total += helper(n)
    total += deeper(n)
    c = Counter(n)
    total += c.add(1)
    ys = sorted(xs, key=helper)
    zs = [v * 2 for v in xs]
    g = lambda v: v + 1
    for w in gen(xs):
        total += w
    if n > 0:
        return f(xs, n - 1)
    return total

def main():
    return f([1, 2], 1)`;

describe('ProgramCalls.canStepOver (which lines cannot run a breakpoint target)', () => {
  const calls = new ProgramCalls(PROGRAM);
  const nonRecursive = new ProgramCalls(PROGRAM.replace('        return f(xs, n - 1)', '        return total + 1'));

  test('a call that cannot reach the target is stepped over; one that can is not', () => {
    // The target is in helper: a line calling helper may run it, one calling leaf may not.
    expect(calls.canStepOver('    total += helper(n)', '    y = x * 2')).toBe(false);
    expect(calls.canStepOver('    total += deeper(n)', '    y = x * 2')).toBe(true);
    // Through a chain of calls: deeper → leaf.
    expect(calls.canStepOver('    total += deeper(n)', '    z = x - 1')).toBe(false);
    // A function passed without being called (a sort key) counts as a call.
    expect(calls.canStepOver('    ys = sorted(xs, key=helper)', '    y = x * 2')).toBe(false);
  });

  test('a target in the current function is reachable from its own lines through recursion only', () => {
    expect(calls.canStepOver('        return f(xs, n - 1)', '        total += w')).toBe(false); // f calls itself here
    expect(calls.canStepOver('    total += helper(n)', '        total += w')).toBe(true); // not here
    expect(nonRecursive.canStepOver('    total += helper(n)', '        total += w')).toBe(true);
    expect(nonRecursive.canStepOver('    total += deeper(n)', '    return total')).toBe(true);
  });

  test('naming a class runs its methods; methods are found by attribute name', () => {
    expect(calls.canStepOver('    c = Counter(n)', '        self.k += n')).toBe(false);
    expect(nonRecursive.canStepOver('    total += c.add(1)', '        self.k += n')).toBe(false);
    expect(nonRecursive.canStepOver('    total += helper(n)', '        self.k += n')).toBe(true);
  });

  test('code that runs away from the line naming it is never stepped over', () => {
    // A generator's body runs where it is iterated; dunder methods where operators call them.
    expect(nonRecursive.canStepOver('    total += helper(n)', '        yield v + 1')).toBe(false);
    expect(nonRecursive.canStepOver('    total += helper(n)', '        self.k = k')).toBe(false);
    // Lambdas and comprehensions run in frames whose lines have their own line's text.
    expect(nonRecursive.canStepOver('    total += helper(n)', '    g = lambda v: v + 1')).toBe(false);
    expect(nonRecursive.canStepOver('    total += helper(n)', '    zs = [v * 2 for v in xs]')).toBe(false);
    // A plain for statement is an ordinary line.
    expect(nonRecursive.canStepOver('    total += helper(n)', '    for w in gen(xs):')).toBe(true);
  });

  test('the target line itself, a line no function holds, and an unknown line are never stepped over', () => {
    expect(nonRecursive.canStepOver('    total += helper(n)', '    total += helper(n)')).toBe(false);
    expect(nonRecursive.canStepOver('    total += helper(n)', 'class Counter:')).toBe(false);
    expect(nonRecursive.canStepOver('    total += helper(n)', '    not in the program')).toBe(false);
  });
});

describe('ProgramCalls.callsOn (whether a line opens traced frames each time it runs)', () => {
  const NO_CLASS = `def helper(x):
    return x * 2

def gen(xs):
    for v in xs:
        yield v

def f(xs, op):
    return xs
`;
  const calls = new ProgramCalls(NO_CLASS);

  const CASES: Array<[string, LineCalls, string]> = [
    ['    y = helper(3)', 'always', 'a program function called directly'],
    ['    if helper(3) > 2:', 'always', 'in a header whose test always runs'],
    ['    ys = [v + 1 for v in xs if v > 0]', 'always', 'a list comprehension runs its frame even when empty'],
    ['    n = sum(v for v in xs)', 'always', 'a generator expression a builtin iterates'],
    ["    s = ''.join(c for c in t)", 'always', 'the same through a method'],
    ['    k = helper([a for a in xs], {b: 1 for b in xs})', 'always', 'two comprehensions as the arguments of one call'],
    ["    s = f'{helper(3)}'", 'always', "an f-string's fields are code (and its prefix is no name)"],
    ['    y = x and helper(x)', 'maybe', 'a condition may skip the call'],
    ['    y = helper(x) if x else 0', 'maybe', 'a conditional expression'],
    ['    for v in helper(xs):', 'maybe', 'a for header calls on its first pass only'],
    ['    it = gen(xs)', 'maybe', 'a generator function runs no frame until iterated'],
    ['    it = (v for v in xs)', 'maybe', 'nor does a generator expression nobody iterates'],
    ['    ys = sorted(xs, key=helper)', 'maybe', 'a function passed as a value'],
    ['    ys = op(xs)', 'maybe', "a parameter may hold the caller's lambda"],
    ['    ys = sorted(xs, key=len)', 'maybe', 'a key may be a function value'],
    ['    ys = list(map(str, xs))', 'maybe', 'map calls what it is given'],
    ['    y = len(xs) + 1', 'none', 'builtins only'],
    ['    xs.append(y)', 'none', 'methods only'],
    ["    s = 'helper(3)'", 'none', 'a string that only mentions a function'],
    ['    for v in xs:', 'none', 'a loop over a value'],
    ['    def inner(a):', 'none', 'a nested def binds a name'],
  ];

  test.each(CASES)('%s: %s (%s)', (line, expected) => {
    expect(calls.callsOn(line)).toBe(expected);
  });

  test('a program with a class: maybe everywhere (its methods run behind operators)', () => {
    expect(new ProgramCalls(`class A:\n    pass\n\n${NO_CLASS}`).callsOn('    y = x + 1')).toBe('maybe');
  });
});
