import { defaultProgramsConfig, GeneratorConfigSchema } from '../../src/programs/config';
import { generateProgram, type GeneratedProgram } from '../../src/programs/generator';
import { withDoubleQuotes } from '../../src/programs/ir';
import { codeFacts } from '../../src/programs/normalize';
import { NAMES, randomStr, wideName, wideString } from '../../src/programs/values';
import { Tokenizer } from '../../src/tokenizer';
import { rawTracer } from '../../src/trace/tracers';
import { Rng } from '../../src/util/rng';

const cfg = defaultProgramsConfig().generator;

/** Lines of the code that are statements of the given keyword (outside strings is guaranteed by
 * the generator's alphabets: no literal contains a newline). */
function countStatements(code: string, keyword: string): number {
  return code.split('\n').filter((l) => new RegExp(`^\\s*${keyword}\\b`).test(l)).length;
}

describe('generateProgram', () => {
  test('is a pure function of (seed, index, config)', () => {
    for (let i = 0; i < 20; i++) {
      const a = generateProgram(7, i, cfg);
      const b = generateProgram(7, i, cfg);
      expect(b).toEqual(a);
      expect(a.id).toBe(`gen-7-${i}`);
    }
    const other = Array.from({ length: 20 }, (_, i) => generateProgram(8, i, cfg).code);
    const mine = Array.from({ length: 20 }, (_, i) => generateProgram(7, i, cfg).code);
    expect(other.filter((c, i) => c === mine[i])).toHaveLength(0);
  });

  test('the construct histogram is exact for statements visible in the code', () => {
    for (let i = 0; i < 60; i++) {
      const p = generateProgram(3, i, cfg);
      const h = p.histogram;
      expect(countStatements(p.code, 'for')).toBe(h.for ?? 0);
      expect(countStatements(p.code, 'while')).toBe(h.while ?? 0);
      expect(countStatements(p.code, 'try')).toBe(h.try ?? 0);
      expect(countStatements(p.code, 'raise')).toBe(h.raise ?? 0);
      expect(countStatements(p.code, 'class')).toBe(h.class ?? 0);
      expect(countStatements(p.code, 'elif')).toBe(h.elif ?? 0);
      expect(countStatements(p.code, 'break')).toBe(h.break ?? 0);
    }
  });

  test('generates parseable Python with 1..3 distinct inputs and its entry function', async () => {
    const progs = Array.from({ length: 200 }, (_, i) => generateProgram(11, i, cfg));
    const facts = await codeFacts(progs.map((p) => p.code));
    expect(facts.filter((f) => !f.ok)).toEqual([]);
    for (const p of progs) {
      expect(p.code).toMatch(new RegExp(`^def ${p.entry}\\(`, 'm'));
      // The entry is the last function (main calls it) and its name is used for nothing else.
      expect(p.code.trimEnd().split('\n').filter((l) => /^def /.test(l)).pop()).toMatch(new RegExp(`^def ${p.entry}\\(`));
      expect(p.inputs.length).toBeGreaterThanOrEqual(1);
      expect(p.inputs.length).toBeLessThanOrEqual(3);
      expect(new Set(p.inputs).size).toBe(p.inputs.length);
    }
    // The mix is actually exercised.
    const has = (c: string) => progs.filter((p) => (p.histogram as Record<string, number>)[c]).length;
    for (const c of ['for', 'while', 'if', 'try', 'raise', 'recursion', 'class', 'method_call', 'listcomp', 'dictcomp', 'slice', 'str_method', 'list_method', 'dict_method', 'early_return', 'helper_call']) {
      expect(has(c)).toBeGreaterThan(0);
    }
  });

  test('entry names vary by default (f for some), and entryNames "f" names every entry f', () => {
    const varied = Array.from({ length: 200 }, (_, i) => generateProgram(11, i, cfg));
    const names = new Set(varied.map((p) => p.entry));
    expect(names.size).toBeGreaterThan(30);
    const fShare = varied.filter((p) => p.entry === 'f').length / varied.length;
    expect(fShare).toBeGreaterThan(0.05);
    expect(fShare).toBeLessThan(0.3);
    const fOnly = GeneratorConfigSchema.parse({ entryNames: 'f' });
    for (let i = 0; i < 50; i++) {
      const f = generateProgram(11, i, fOnly);
      expect(f.entry).toBe('f');
      expect(f.code).toMatch(/^def f\(/m);
      expect(generateProgram(11, i, fOnly)).toEqual(f);
    }
  });

  test('doubleQuotes writes a share of programs in double quotes and changes nothing else', async () => {
    const all = GeneratorConfigSchema.parse({ doubleQuotes: 1 });
    const plain = Array.from({ length: 200 }, (_, i) => generateProgram(11, i, cfg));
    const double = Array.from({ length: 200 }, (_, i) => generateProgram(11, i, all));
    expect(Array.from({ length: 20 }, (_, i) => generateProgram(11, i, GeneratorConfigSchema.parse({ doubleQuotes: 0 })))).toEqual(plain.slice(0, 20));
    expect(double.filter((d, i) => d.code !== plain[i].code).length).toBeGreaterThan(100);
    double.forEach((d, i) => {
      expect({ ...d, code: '', inputs: [] }).toEqual({ ...plain[i], code: '', inputs: [] });
      // The generator's alphabets hold no quotes, so no single quote may be left.
      if (!plain[i].code.includes('"')) expect(d.code).not.toContain("'");
    });
    // Python reads the same program and the same inputs: constants are part of the AST hash.
    const asts = async (ps: typeof plain) => (await codeFacts(ps.flatMap((p) => [p.code, ...p.inputs.map((x) => `(${x},)`)]))).map((f) => f.ast);
    expect(await asts(double)).toEqual(await asts(plain));
    const some = Array.from({ length: 400 }, (_, i) => generateProgram(11, i, GeneratorConfigSchema.parse({ doubleQuotes: 0.3 })));
    const share = some.filter((p, i) => p.code !== generateProgram(11, i, cfg).code).length / some.filter((p) => /['"]/.test(p.code)).length;
    expect(share).toBeGreaterThan(0.2);
    expect(share).toBeLessThan(0.4);
  });

  test('wideNames draws a share of variable names outside the pools and changes nothing but names', async () => {
    const plain = Array.from({ length: 200 }, (_, i) => generateProgram(11, i, cfg));
    expect(Array.from({ length: 20 }, (_, i) => generateProgram(11, i, GeneratorConfigSchema.parse({ wideNames: 0 })))).toEqual(plain.slice(0, 20));
    const wide = Array.from({ length: 200 }, (_, i) => generateProgram(11, i, GeneratorConfigSchema.parse({ wideNames: 1 })));
    // A few programs take another path where the generator tests a name against an
    // expression's text (`\bt\b` also matches inside a literal) or the names in scope;
    // the rest differ in names only.
    const same = wide.map((w, i) => JSON.stringify({ ...w, code: '' }) === JSON.stringify({ ...plain[i], code: '' }));
    expect(same.filter(Boolean).length).toBeGreaterThan(190);
    // Python runs them the same way: the same lines, the same results, under other names.
    const runs = async (ps: typeof plain) => {
      const records = ps.slice(0, 40).map((p) => ({ id: p.id, code: p.code, entry: p.entry, input: p.inputs[0] }));
      return (await rawTracer().trace(records)).map((r) => ({ status: r.status, steps: r.events.map((e) => `${e.event}:${e.line}:${e.event === 'return' ? e.value : ''}`) }));
    };
    const [wideRuns, plainRuns] = [await runs(wide), await runs(plain)];
    const ran = plainRuns.filter((r) => r.steps.length > 3).length;
    expect(ran).toBeGreaterThan(30);
    expect(wideRuns.filter((r, i) => same[i] && r.steps.length > 3 && JSON.stringify(r) === JSON.stringify(plainRuns[i])).length).toBeGreaterThanOrEqual(ran * 0.9);
    const pooled = new Set(Object.values(NAMES).flat());
    const params = (ps: typeof plain) => ps.flatMap((p) => (new RegExp(`^def ${p.entry}\\((.*)\\):`, 'm').exec(p.code) as RegExpExecArray)[1].split(', '));
    expect(params(plain).every((n) => pooled.has(n))).toBe(true);
    const wideParams = params(wide);
    expect(wideParams.filter((n) => pooled.has(n)).length).toBeLessThan(wideParams.length * 0.1);
    expect(wideParams.some((n) => n.length === 1)).toBe(true);
    expect(new Set(wideParams).size).toBeGreaterThan(wideParams.length / 2);
    const some = Array.from({ length: 200 }, (_, i) => generateProgram(11, i, GeneratorConfigSchema.parse({ wideNames: 0.3 })));
    const share = params(some).filter((n, i) => n !== params(plain)[i]).length / params(plain).length;
    expect(share).toBeGreaterThan(0.2);
    expect(share).toBeLessThan(0.4);
  });

  test('wideParams sets the share of wide names among the entry function\'s parameters only', () => {
    const plain = Array.from({ length: 200 }, (_, i) => generateProgram(17, i, GeneratorConfigSchema.parse({ wideNames: 0.1 })));
    // Unset, the parameters follow wideNames: the same programs.
    expect(Array.from({ length: 200 }, (_, i) => generateProgram(17, i, GeneratorConfigSchema.parse({ wideNames: 0.1, wideParams: 0.1 })))).toEqual(plain);
    const wide = Array.from({ length: 200 }, (_, i) => generateProgram(17, i, GeneratorConfigSchema.parse({ wideParams: 1 })));
    const pooled = new Set(Object.values(NAMES).flat());
    const defs = (p: GeneratedProgram) => [...p.code.matchAll(/^def (\w+)\((.*)\):/gm)].map((m) => ({ fn: m[1], params: m[2].split(', ') }));
    const entryParams = wide.flatMap((p) => defs(p).filter((d) => d.fn === p.entry).flatMap((d) => d.params));
    const helpers = (ps: GeneratedProgram[]) => ps.flatMap((p) => defs(p).filter((d) => d.fn !== p.entry));
    // A wide name is at times a listed one by chance (`n`, `s`, `d`).
    expect(entryParams.filter((n) => pooled.has(n)).length).toBeLessThan(entryParams.length * 0.15);
    // Helpers keep the names they have without wide names.
    const listed = Array.from({ length: 200 }, (_, i) => generateProgram(17, i, cfg));
    expect(helpers(wide).length).toBeGreaterThan(50);
    expect(helpers(wide)).toEqual(helpers(listed));
  });

  test('wideStrings replaces a share of the string inputs and nothing else', () => {
    const plain = Array.from({ length: 300 }, (_, i) => generateProgram(13, i, cfg));
    expect(Array.from({ length: 20 }, (_, i) => generateProgram(13, i, GeneratorConfigSchema.parse({ wideStrings: 0 })))).toEqual(plain.slice(0, 20));
    const stringsOf = (input: string) => [...input.matchAll(/'([^']*)'|"([^"]*)"/g)].map((m) => m[1] ?? m[2]);
    const withoutStrings = (input: string) => input.replace(/'[^']*'|"[^"]*"/g, "''");
    // The share of strings a wide draw changes: at 1, every string but dict keys (kept) and
    // the rare draw that equals the plain one; at 0.5, half as many.
    const changedShare = (share: number) => {
      const wide = Array.from({ length: 300 }, (_, i) => generateProgram(13, i, GeneratorConfigSchema.parse({ wideStrings: share })));
      let strings = 0;
      let changed = 0;
      wide.forEach((w, i) => {
        // The code, the entry and every non-string part of the inputs stay as they were.
        expect({ ...w, inputs: [] }).toEqual({ ...plain[i], inputs: [] });
        expect(w.inputs.map(withoutStrings)).toEqual(plain[i].inputs.map(withoutStrings));
        const [a, b] = [w.inputs.flatMap(stringsOf), plain[i].inputs.flatMap(stringsOf)];
        strings += b.length;
        changed += a.filter((x, k) => x !== b[k]).length;
      });
      expect(strings).toBeGreaterThan(200);
      return changed / strings;
    };
    const all = changedShare(1);
    expect(all).toBeGreaterThan(0.6);
    const half = changedShare(0.5);
    expect(half).toBeGreaterThan(0.4 * all);
    expect(half).toBeLessThan(0.6 * all);
  });

  test('stringLoops makes for statements loop over characters, most folding them into an accumulator', async () => {
    const plain = Array.from({ length: 20 }, (_, i) => generateProgram(17, i, cfg));
    expect(Array.from({ length: 20 }, (_, i) => generateProgram(17, i, GeneratorConfigSchema.parse({ stringLoops: 0 })))).toEqual(plain);
    const progs = Array.from({ length: 300 }, (_, i) => generateProgram(17, i, GeneratorConfigSchema.parse({ stringLoops: 1 })));
    expect((await codeFacts(progs.map((p) => p.code))).filter((f) => !f.ok)).toEqual([]);
    const withFor = progs.filter((p) => p.histogram.for);
    expect(withFor.length).toBeGreaterThan(60);
    // Python binds the loop targets to one character: each for line's target (or the second
    // name of `i, c in enumerate(...)`) holds a one-character string whenever the body runs,
    // except in the loops a class's use makes over its list (`for n in buf: obj.add(n)`).
    const records = withFor.map((p) => ({ id: p.id, code: p.code, entry: p.entry, input: p.inputs[0] }));
    const runs = await rawTracer().trace(records);
    expect(runs.filter((r) => r.status === 'normal').length).toBeGreaterThan(withFor.length * 0.8);
    let bound = 0;
    let chars = 0;
    let folded = 0;
    runs.forEach((r, k) => {
      const lines = withFor[k].code.split('\n');
      for (const e of r.events) {
        const head = e.event === 'line' && /^\s*for (?:\w+, )?(\w+) in /.exec(lines[e.line - 2] ?? '');
        if (!head || !(head[1] in e.locals)) continue;
        bound++;
        if (!/^(['"]).\1$|^'\\.'$/.test(e.locals[head[1]])) continue;
        chars++;
        if (new RegExp(`\\b${head[1]}\\b`).test(e.src) && /\+=|\.append\(|\.get\(|= \w+ \+ /.test(e.src)) folded++;
      }
    });
    expect(bound).toBeGreaterThan(100);
    expect(chars).toBeGreaterThan(bound * 0.9);
    expect(folded).toBeGreaterThan(chars * 0.4);
  });

  test('wideString spells its words with many more of the shipped tokenizer\'s pieces than the plain strings', async () => {
    const tok = await Tokenizer.load('tokenizer/ndbg-2k.model');
    const rng = Rng.from(3, 'strings');
    const [plain, wide] = [new Set<number>(), new Set<number>()];
    for (let i = 0; i < 1000; i++) {
      for (const id of tok.encodeIds(randomStr(rng))) plain.add(id);
      const s = wideString(rng);
      expect(s).toMatch(/^[A-Za-z][A-Za-z0-9 _,.-]*$/);
      for (const id of tok.encodeIds(s)) wide.add(id);
    }
    // count.py's `berry`, piece by piece, is one of them: `b` `err` `y`.
    for (const id of tok.encodeIds('berry')) expect(wide.has(id)).toBe(true);
    expect(wide.size).toBeGreaterThan(1.3 * plain.size);
  });

  test('wideName never draws a keyword or a builtin the generator does not reserve itself', () => {
    const rng = Rng.from(5, 'names');
    const drawn = Array.from({ length: 20000 }, () => wideName(rng));
    for (const bad of ['if', 'in', 'is', 'or', 'as', 'def', 'for', 'not', 'and', 'del', 'try', 'hex', 'bin', 'oct']) expect(drawn).not.toContain(bad);
    expect(drawn.every((n) => /^[a-z][a-z]*(_[a-z]+|[0-9])?$/.test(n))).toBe(true);
  });

  test('withDoubleQuotes keeps literals that hold a double quote, and f-strings stay f-strings', () => {
    expect(withDoubleQuotes(`x = 'ab' + f'{a}:{b}' + 'say "hi"' + "it's" + '\\\\'`)).toBe(`x = "ab" + f"{a}:{b}" + 'say "hi"' + "it's" + "\\\\"`);
  });

  test('knobs: call depth weights, nesting and the construct mix are honoured', () => {
    const deep = GeneratorConfigSchema.parse({ callDepthWeights: [0, 0, 0, 1], recursion: 0, classes: 0, raisingHelper: 0 });
    const flat = GeneratorConfigSchema.parse({ nesting: 1, mix: { while: 0, try: 0 } });
    for (let i = 0; i < 30; i++) {
      const d = generateProgram(5, i, deep);
      expect(d.plannedDepth).toBe(4);
      expect(d.histogram.helper).toBe(3);
      expect(d.histogram.recursion).toBeUndefined();
      expect(d.histogram.class).toBeUndefined();
      const f = generateProgram(5, i, flat);
      expect(f.histogram.nested_loop).toBeUndefined();
      expect(f.histogram.while).toBeUndefined();
    }
  });

  test('config validation names the bad fields', () => {
    const r = GeneratorConfigSchema.safeParse({ nesting: 9, statements: { min: 5, max: 2 }, bogus: 1 });
    expect(r.success).toBe(false);
    const text = JSON.stringify(r.success ? null : r.error.issues);
    expect(text).toContain('nesting');
    expect(text).toContain('statements');
    expect(text).toContain('bogus');
  });
});
