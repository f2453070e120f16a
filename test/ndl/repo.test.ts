import * as fs from 'fs';
import * as path from 'path';
import { readDocuments } from '../../src/data/sources';
import { buildForwardTree, buildInverseTree } from '../../src/debugger';
import { defaultSamplerConfig } from '../../src/ndl/config';
import { sampleDocuments } from '../../src/ndl/generate';
import { fitContext, innermostBlock, renderContext } from '../../src/ndl/repo_context';
import { entryCandidates, entrySamplingSchema, sampleEntries, scopeTrace, scopedTraces } from '../../src/ndl/repo_scope';
import { approxTokenCount } from '../../src/ndl/sampler';
import type { FunctionBlock, RepoTraceRecord } from '../../src/trace/repo';
import { traceShop } from '../helpers/repo';
import { tempDir } from '../helpers/tmp';
import { isHeldOutRepository } from '../../src/ndl/repo_run';

/** Entry sampling, scoping and the multi-file SRC rule (docs/ndl.md, "Repository documents"). */
const opts = entrySamplingSchema.parse({});
let records: RepoTraceRecord[];
beforeAll(async () => {
  records = await traceShop();
});
const byEntry = (suffix: string) => records.find((r) => r.entry.endsWith(suffix)) as RepoTraceRecord;

describe('entry candidates and sampling', () => {
  it('offers only invocations that return within the trace, named functions, in the depth range', () => {
    for (const r of records) {
      for (const c of entryCandidates(r, opts)) {
        const call = r.events[c.start];
        const ret = r.events[c.end];
        expect([call.event, ret.event, ret.invocation]).toEqual(['call', 'return', call.invocation]);
        expect(call.func.startsWith('<')).toBe(false);
      }
    }
    const shallow = entryCandidates(byEntry('test_summary'), { ...opts, maxDepth: 1 });
    expect(shallow.every((c) => byEntry('test_summary').events[c.start].depth <= 1)).toBe(true);
    expect(shallow.length).toBeLessThan(entryCandidates(byEntry('test_summary'), opts).length);
  });

  it('leaves inner recursive calls out unless recursion is allowed', () => {
    const r = byEntry('test_nested');
    const funcs = (o: typeof opts) => entryCandidates(r, { ...o, minEvents: 1 }).map((c) => `${r.events[c.start].func}@${r.events[c.start].depth}`);
    expect(funcs(opts)).toEqual(['test_nested@0', 'nested_total@1', 'nested_total@2', 'nested_total@2', 'nested_total@3']);
    expect(funcs({ ...opts, recursion: false })).toEqual(['test_nested@0', 'nested_total@1']);
  });

  it('draws perTrace entries, the same for the same seed', () => {
    const r = byEntry('test_summary');
    const a = sampleEntries(r, 3, { ...opts, perTrace: 5 });
    expect(a).toHaveLength(5);
    expect(sampleEntries(r, 3, { ...opts, perTrace: 5 })).toEqual(a);
    const seeds = new Set([0, 1, 2, 3, 4, 5].map((s) => JSON.stringify(sampleEntries(r, s, { ...opts, perTrace: 5 }))));
    expect(seeds.size).toBeGreaterThan(1);
  });
});

describe('a scoped trace', () => {
  const removeScope = () => {
    const r = byEntry('test_out_of_stock');
    const c = entryCandidates(r, opts).find((x) => r.events[x.start].func === 'remove');
    return scopeTrace(r, c!, opts);
  };

  it("is the invocation's events with the entry at depth 1 and EXIT 'error' when an exception left it", () => {
    const t = removeScope();
    expect(t.level).toBe('repository');
    expect(t.events[0]).toMatchObject({ event: 'call', depth: 1, func: 'remove', file: 'inventory/models.py' });
    expect(t.events[t.events.length - 1]).toMatchObject({ event: 'return', depth: 1, value: null });
    expect(t.events.every((e) => e.depth >= 1 && e.file !== undefined)).toBe(true);
    expect([t.status, t.error]).toEqual(['error', "OutOfStock('pear: wanted 4, 1 left')"]);
    expect(t.scope).toMatchObject({ repo_id: 'shop', entry: 'unittest:tests.test_models.InventoryTest.test_out_of_stock', func: 'remove', depth: 1, omitted: 0 });
  });

  it('has as SRC the entry function and its callee, each under its file name and class', () => {
    expect(removeScope().code).toBe(
      [
        '# file: inventory/models.py',
        'class Inventory:',
        '    def remove(self, name, count=1):',
        '        item = self.items.get(name)',
        '        left = item.count if item is not None else 0',
        '        if left < count:',
        '            raise OutOfStock(name, count, left)',
        '        item.count = left - count',
        '        return item.count',
        '',
        '# file: inventory/errors.py',
        'class OutOfStock(Exception):',
        '    def __init__(self, name, wanted, left):',
        '        super().__init__("%s: wanted %d, %d left" % (name, wanted, left))',
        '        self.name = name',
        '        self.wanted = wanted',
        '        self.left = left',
      ].join('\n'),
    );
  });

  it('lists as breakpoint targets the statement lines of its blocks, as file lines', () => {
    const t = removeScope();
    const files = byEntry('test_out_of_stock').files;
    const targets = t.scope!.statement_lines;
    expect(targets.map((s) => `${s.file}:${s.line}`)).toEqual([31, 32, 33, 34, 35, 36].map((l) => `inventory/models.py:${l}`).concat([5, 6, 7, 8].map((l) => `inventory/errors.py:${l}`)));
    for (const s of targets) expect(files[s.file].split('\n')[s.line - 1]).toBe(s.src);
  });

  it('takes callees while the SRC fits the budget, the entry always', () => {
    const r = byEntry('test_summary');
    const c = entryCandidates(r, opts).find((x) => r.events[x.start].func === 'demo')!;
    const all = scopeTrace(r, c, opts);
    const tight = scopeTrace(r, c, { ...opts, contextTokens: 1 });
    expect(all.scope!.blocks.length).toBeGreaterThan(4);
    expect(all.scope!.omitted).toBe(0);
    expect(tight.scope!.blocks).toEqual([['inventory/report.py', 34, 39]]);
    expect(tight.scope!.omitted).toBe(all.scope!.blocks.length - 1);
    const mid = scopeTrace(r, c, { ...opts, contextTokens: 150 });
    expect(approxTokenCount(mid.code)).toBeLessThanOrEqual(150);
    expect(mid.scope!.blocks.length + mid.scope!.omitted).toBe(all.scope!.blocks.length);
  });

  it('builds trees whose CONTEXT is the SRC alone, and documents from them', () => {
    for (const t of scopedTraces(byEntry('test_checkout'), 0, opts)) {
      const fwd = buildForwardTree(t);
      const inv = buildInverseTree(t);
      expect(fwd.context).toBe(`${t.code}\n`);
      expect(inv.context).toBe(`${t.code}\n`);
      expect(fwd.nodes[0]).toMatchObject({ event: 'call', depth: 1, index: 0 });
      expect(inv.nodes[0].event).toBe('inv_return');
      expect(inv.nodes[inv.nodes.length - 1]).toMatchObject({ event: 'inv_call', depth: 1 });
      const docs = sampleDocuments(t, 1, 4, defaultSamplerConfig()).records;
      expect(docs).toHaveLength(4);
      for (const d of docs) expect(d.text.startsWith(`<|begin_of_text|><|trace_context_start|>${t.code}\n<|frame_sep|>`)).toBe(true);
    }
  });
});

describe('the SRC rule on hand-made blocks', () => {
  const file = ['class A:', '    def f(self):', '        def g():', '            return 1', '        return g()', '', '    def h(self):', '        return 2', '', 'def k():', '    return 3'].join('\n');
  const f: FunctionBlock = [2, 2, 5, [1]];
  const g: FunctionBlock = [3, 3, 4, [1]];
  const h: FunctionBlock = [7, 7, 8, [1]];
  const k: FunctionBlock = [10, 10, 11, []];
  const files = { 'a.py': file, 'b.py': file };

  it('finds the innermost block of a line', () => {
    expect(innermostBlock([f, g, h, k], 4)).toBe(g);
    expect(innermostBlock([f, g, h, k], 5)).toBe(f);
    expect(innermostBlock([f, g, h, k], 6)).toBeUndefined();
  });

  it('writes a class header once for consecutive methods, blocks in line order, sections in first-call order', () => {
    const text = renderContext([{ file: 'b.py', block: k }, { file: 'a.py', block: h }, { file: 'a.py', block: f }], files);
    expect(text).toBe(['# file: b.py', 'def k():', '    return 3', '', '# file: a.py', 'class A:', '    def f(self):', '        def g():', '            return 1', '        return g()', '', '    def h(self):', '        return 2'].join('\n'));
  });

  it('does not write a block inside another taken block again', () => {
    const fit = fitContext([{ file: 'a.py', block: g }, { file: 'a.py', block: f }, { file: 'a.py', block: g }], files, 1000, approxTokenCount);
    expect(fit.chosen.map((c) => c.block)).toEqual([f]);
  });
});

describe('held-out repositories', () => {
  it('holds out whole repositories: named ones, or a seeded fraction by id', () => {
    expect(isHeldOutRepository('a', { fraction: 0, seed: 0, repos: ['a'] })).toBe(true);
    expect(isHeldOutRepository('b', { fraction: 0.99, seed: 0, repos: ['a'] })).toBe(false);
    const ids = Array.from({ length: 400 }, (_, i) => `repo${i}`);
    const held = ids.filter((id) => isHeldOutRepository(id, { fraction: 0.25, seed: 3 }));
    expect(held.length).toBeGreaterThan(60);
    expect(held.length).toBeLessThan(140);
    expect(ids.filter((id) => isHeldOutRepository(id, { fraction: 0.25, seed: 3 }))).toEqual(held);
  });

  it('gives repository-level documents their repository as the split key, function-level ones their id', async () => {
    const dir = tempDir('repo-source');
    const file = path.join(dir, 'docs.jsonl');
    const t = scopedTraces(byEntry('test_checkout'), 0, opts)[0];
    const repoDoc = sampleDocuments(t, 0, 1, defaultSamplerConfig()).records[0];
    expect(repoDoc.repo).toBe('shop');
    fs.writeFileSync(file, [JSON.stringify(repoDoc), JSON.stringify({ id: 'p1', direction: 'forward', actions: [], text: 'x' })].join('\n') + '\n');
    const keys: string[] = [];
    for await (const d of readDocuments({ name: 'mix', path: file, kind: 'ndl' })) keys.push(d.key);
    expect(keys).toEqual(['repo:shop', 'p1']);
  });
});
