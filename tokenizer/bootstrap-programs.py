# Writes tokenizer/bootstrap-programs.jsonl: hand-written programs (not CruxEval) plus seeded
# input variants, the NDL text of the first shipped tokenizer (see docs/tokenizer.md).
# Run: python3 tokenizer/bootstrap-programs.py
import json
import os
P = []
def add(code, *inputs):
    P.append((code.strip('\n'), inputs))

add('''
def f(words):
    counts = {}
    for w in words:
        counts[w] = counts.get(w, 0) + 1
    best = max(counts, key=counts.get)
    return best, counts[best]
''', "['a', 'b', 'a', 'c']", "['x']", "['red', 'blue', 'red', 'blue', 'blue']")
add('''
def f(n):
    a, b = 0, 1
    seq = []
    while len(seq) < n:
        seq.append(a)
        a, b = b, a + b
    return seq
''', "5", "0", "12")
add('''
def f(text, sep):
    parts = text.split(sep)
    parts = [p.strip() for p in parts if p.strip()]
    return sep.join(reversed(parts))
''', "'a, b ,c', ','", "'  one  two ', ' '", "'x|y||z', '|'")
add('''
def helper(x):
    if x % 2 == 0:
        return x // 2
    return 3 * x + 1

def f(start):
    steps = 0
    while start != 1:
        start = helper(start)
        steps += 1
    return steps
''', "6", "7", "1", "27")
add('''
def f(matrix):
    rows = len(matrix)
    cols = len(matrix[0])
    out = [[0] * rows for _ in range(cols)]
    for i in range(rows):
        for j in range(cols):
            out[j][i] = matrix[i][j]
    return out
''', "[[1, 2], [3, 4]]", "[[1, 2, 3]]", "[[5], [6], [7]]")
add('''
def f(s):
    result = ''
    for ch in s:
        if ch.isupper():
            result += ch.lower()
        elif ch.islower():
            result += ch.upper()
        else:
            result += '_'
    return result
''', "'Hello World!'", "'abc123'", "'MiXeD cAsE'")
add('''
def f(nums, target):
    seen = {}
    for i, n in enumerate(nums):
        need = target - n
        if need in seen:
            return (seen[need], i)
        seen[n] = i
    return None
''', "[2, 7, 11, 15], 9", "[1, 2, 3], 7", "[3, 3], 6", "[-1, 4, 10, -5], 5")
add('''
def f(d, key, default):
    try:
        value = d[key]
    except KeyError:
        value = default
    d[key] = value * 2
    return d
''', "{'a': 1}, 'a', 0", "{}, 'z', 5", "{'k': 'ab'}, 'k', ''")
add('''
def f(items):
    stack = []
    pairs = {')': '(', ']': '[', '}': '{'}
    for c in items:
        if c in '([{':
            stack.append(c)
        elif c in pairs:
            if not stack or stack.pop() != pairs[c]:
                return False
    return not stack
''', "'(a[b]{c})'", "'(]'", "'((('", "'{[()()]}'")
add('''
def f(x):
    if x < 0:
        raise ValueError('negative: %d' % x)
    total = 0
    for k in range(1, x + 1):
        total += k * k
    return total
''', "4", "-3", "0", "10")
add('''
class Counter:
    def __init__(self, start):
        self.value = start

    def bump(self, by):
        self.value += by
        return self.value

def f(start, steps):
    c = Counter(start)
    history = []
    for s in steps:
        history.append(c.bump(s))
    return history
''', "0, [1, 2, 3]", "10, [-5, -5]", "3.5, [0.25]")
add('''
def f(text):
    vowels = set('aeiou')
    n = sum(1 for ch in text.lower() if ch in vowels)
    ratio = n / max(len(text), 1)
    return round(ratio, 3)
''', "'Programming'", "'rhythm'", "''", "'AEIOU aeiou'")
add('''
def f(a, b):
    while b:
        a, b = b, a % b
    return a
''', "48, 18", "17, 5", "0, 9", "1071, 462")
add('''
def f(lst):
    result = []
    for item in lst:
        if isinstance(item, list):
            result.extend(f(item))
        else:
            result.append(item)
    return result
''', "[1, [2, [3, 4]], 5]", "[]", "[[['deep']], 'shallow']")
add('''
def f(s, k):
    best = ''
    for i in range(len(s) - k + 1):
        window = s[i:i + k]
        if window > best:
            best = window
    return best
''', "'banana', 2", "'abc', 3", "'zyx', 1")
add('''
def f(prices):
    lo = float('inf')
    profit = 0
    for p in prices:
        lo = min(lo, p)
        profit = max(profit, p - lo)
    return profit
''', "[7, 1, 5, 3, 6, 4]", "[7, 6, 4, 3, 1]", "[2.5, 3.75, 1.0]")
add('''
def f(records):
    by_dept = {}
    for name, dept, salary in records:
        by_dept.setdefault(dept, []).append((salary, name))
    top = {d: max(v)[1] for d, v in by_dept.items()}
    return sorted(top.items())
''', "[('ann', 'eng', 120), ('bob', 'eng', 95), ('cy', 'ops', 70)]", "[]", "[('z', 'a', 1)]")
add('''
def f(n):
    primes = []
    candidate = 2
    while len(primes) < n:
        if all(candidate % p for p in primes):
            primes.append(candidate)
        candidate += 1
    return primes
''', "6", "1", "10")
add('''
def f(text, width):
    lines = []
    line = ''
    for word in text.split():
        if len(line) + len(word) + 1 > width and line:
            lines.append(line)
            line = word
        else:
            line = (line + ' ' + word).strip()
    if line:
        lines.append(line)
    return '\\n'.join(lines)
''', "'the quick brown fox jumps over the lazy dog', 10", "'a b c', 1", "'', 5")
add('''
def f(bits):
    value = 0
    for b in bits:
        value = value * 2 + int(b)
    return hex(value), bin(value), value
''', "'1011'", "'0'", "'11111111'", "'100000000000000000000000000000001'")
add('''
def f(xs):
    xs = list(xs)
    for i in range(1, len(xs)):
        j = i
        while j > 0 and xs[j - 1] > xs[j]:
            xs[j - 1], xs[j] = xs[j], xs[j - 1]
            j -= 1
    return xs
''', "[3, 1, 2]", "(5, 4, 3, 2, 1)", "'hello'", "[]")
add('''
def f(s):
    out = []
    i = 0
    while i < len(s):
        j = i
        while j < len(s) and s[j] == s[i]:
            j += 1
        out.append(f'{s[i]}{j - i}')
        i = j
    return ''.join(out)
''', "'aaabccdddd'", "'x'", "'ééé€€'")
add('''
def f(a, b):
    result = a / b
    return int(result) if result == int(result) else result
''', "10, 2", "7, 2", "1, 0", "-9, 3")
add('''
def f(data):
    keys = sorted(data)
    lo, hi = keys[0], keys[-1]
    span = {k: data[k] for k in keys if lo < k < hi}
    return lo, hi, span
''', "{3: 'c', 1: 'a', 2: 'b'}", "{'b': None, 'a': True, 'c': False}", "{0.5: [1], -1: ()}")
add('''
def f(n, memo=None):
    if memo is None:
        memo = {}
    if n < 2:
        return n
    if n not in memo:
        memo[n] = f(n - 1, memo) + f(n - 2, memo)
    return memo[n]
''', "5", "1", "20")
add('''
def f(s):
    words = s.split()
    caps = [w[:1].upper() + w[1:] for w in words]
    title = ' '.join(caps)
    if len(title) > 20:
        title = title[:17] + '...'
    return title
''', "'hello there general kenobi'", "'x'", "'tab\\tseparated words'")
add('''
def f(nums):
    evens = [n for n in nums if n % 2 == 0]
    odds = [n for n in nums if n % 2]
    return sum(evens) - sum(odds), len(evens), len(odds)
''', "[1, 2, 3, 4, 5, 6]", "[]", "[-2, -3, 100, 1001]")
add('''
def f(grid, r, c):
    h, w = len(grid), len(grid[0])
    seen = set()
    todo = [(r, c)]
    color = grid[r][c]
    while todo:
        y, x = todo.pop()
        if (y, x) in seen or not (0 <= y < h and 0 <= x < w) or grid[y][x] != color:
            continue
        seen.add((y, x))
        todo.extend([(y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)])
    return len(seen)
''', "[[1, 1, 0], [0, 1, 0], [1, 1, 1]], 0, 0", "[[5]], 0, 0", "[[0, 1], [1, 0]], 1, 1")
add('''
def f(s, shift):
    out = []
    for ch in s:
        if ch.isalpha():
            base = ord('a') if ch.islower() else ord('A')
            out.append(chr((ord(ch) - base + shift) % 26 + base))
        else:
            out.append(ch)
    return ''.join(out)
''', "'Hello, World!', 3", "'xyz', 2", "'abc', -1")
add('''
def f(values):
    it = iter(values)
    total = next(it)
    for v in it:
        total = total * 10 + v
    return total, str(total)[::-1]
''', "[1, 2, 3]", "[9]", "[]", "[0, 0, 7, 4, 1, 8, 5, 9, 3, 0, 2, 6]")
add('''
def f(path):
    parts = []
    for p in path.split('/'):
        if p == '..':
            if parts:
                parts.pop()
        elif p and p != '.':
            parts.append(p)
    return '/' + '/'.join(parts)
''', "'/a/./b/../../c/'", "'/../'", "'/home//user/docs'")
add('''
def f(a):
    a = a.copy()
    total = 0
    while a:
        x = a.pop(0)
        if x is None:
            break
        total += x
    return total, a
''', "[1, 2, None, 4]", "[None]", "[1.5, 2.5]")
add('''
def f(t):
    x, *rest = t
    y = rest[-1] if rest else x
    return {'first': x, 'last': y, 'middle': rest[:-1]}
''', "(1, 2, 3, 4)", "('only',)", "[[1], [2]]")
add('''
def f(s):
    nums = [int(tok) for tok in s.split(',')]
    return min(nums), max(nums), sum(nums) / len(nums)
''', "'3,1,4,1,5'", "'42'", "'1,x'", "'-10,10'")
add('''
def f(text):
    freq = {}
    for ch in text:
        if ch != ' ':
            freq[ch] = freq.get(ch, 0) + 1
    ordered = sorted(freq.items(), key=lambda kv: (-kv[1], kv[0]))
    return ordered[:3]
''', "'mississippi'", "'a b c'", "'∑∫∂ ∑'")
add('''
def f(n):
    rows = []
    for i in range(n):
        row = [1]
        if rows:
            prev = rows[-1]
            row += [prev[k] + prev[k + 1] for k in range(len(prev) - 1)]
            row.append(1)
        rows.append(row)
    return rows
''', "4", "1", "6")
add('''
def f(a, b):
    common = set(a) & set(b)
    only_a = set(a) - set(b)
    return sorted(common), sorted(only_a), len(set(a) | set(b))
''', "[1, 2, 3], [2, 3, 4]", "'abc', 'cde'", "[], [1]")
add('''
def f(s):
    if not s:
        return s
    mid = len(s) // 2
    left = f(s[:mid]) if mid > 1 else s[:mid]
    right = f(s[mid:]) if len(s) - mid > 1 else s[mid:]
    return right + left
''', "'abcdef'", "'ab'", "'x'", "[1, 2, 3, 4, 5]")
add('''
def f(amount, coins):
    ways = [1] + [0] * amount
    for c in coins:
        for v in range(c, amount + 1):
            ways[v] += ways[v - c]
    return ways[amount]
''', "5, [1, 2, 5]", "3, [2]", "10, [10]")
add('''
def f(x):
    kind = type(x).__name__
    if isinstance(x, (list, tuple)):
        return kind, len(x), [f(v)[0] for v in x]
    return kind, None, repr(x)
''', "[1, 'a', None, 2.0]", "(True,)", "b'bytes'", "{1: 2}")
lines = []
for i, (code, inputs) in enumerate(P):
    for j, inp in enumerate(inputs):
        lines.append(json.dumps({'id': 'boot_%02d_%d' % (i, j), 'code': code, 'input': inp}))
print(len(P), 'programs,', len(lines), 'hand-written inputs')

# Variants: each input's literal values mutated (same structure, new values), kept only if the
# run stays short (< 1500 traced line events), so that documents stay document-sized.
import ast, random, sys
rng = random.Random(1234)
ALPH = 'abcdefghijklmnopqrstuvwxyz'
def mut(v, depth=0):
    if isinstance(v, bool): return rng.choice([True, False])
    if isinstance(v, int): return rng.randint(-3, 3) if abs(v) < 4 and rng.random() < 0.3 else rng.randint(0, max(12, 2 * abs(v)))
    if isinstance(v, float): return round(rng.uniform(-10, 10), rng.choice([1, 2, 3]))
    if isinstance(v, str):
        if not v: return rng.choice(['', 'a', 'ab'])
        pool = sorted(set(v)) + list(ALPH[:6])
        n = max(0, len(v) + rng.randint(-2, 3))
        return ''.join(rng.choice(pool) for _ in range(n))
    if isinstance(v, (list, tuple)):
        items = [mut(x, depth + 1) for x in v]
        if items and rng.random() < 0.5:
            items = items + [mut(rng.choice(v), depth + 1) for _ in range(rng.randint(0, 3))]
            rng.shuffle(items)
        return type(v)(items)
    if isinstance(v, dict):
        return {mut(k, depth + 1) if not isinstance(k, (list, dict)) else k: mut(x, depth + 1) for k, x in v.items()}
    return v
def lines_used(code, inp):
    g = {}
    n = [0]
    def tr(frame, event, arg):
        if frame.f_code.co_filename == '<boot>':
            n[0] += 1
            if n[0] > 1500: raise RuntimeError('too long')
        return tr
    try:
        exec(compile(code, '<boot>', 'exec'), g)
        args = eval('(' + inp + ',)', g)
        sys.settrace(tr)
        try:
            g['f'](*args)
        finally:
            sys.settrace(None)
    except RuntimeError as e:
        if str(e) == 'too long': return None
    except BaseException:
        pass
    return n[0]
out = []
for i, (code, inputs) in enumerate(P):
    seen = set(inputs)
    variants = list(inputs)
    tries = 0
    while len(variants) < 16 and tries < 200:
        tries += 1
        base = ast.literal_eval('(' + rng.choice(inputs) + ',)')
        new = ', '.join(repr(x) for x in mut(base))
        if new in seen: continue
        seen.add(new)
        if lines_used(code, new) is None: continue
        variants.append(new)
    for j, inp in enumerate(variants):
        out.append(json.dumps({'id': 'boot_%02d_%02d' % (i, j), 'code': code, 'input': inp}))
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'bootstrap-programs.jsonl'), 'w').write('\n'.join(out) + '\n')
print('with variants', len(out))
