import * as fs from 'fs';
import * as path from 'path';

/**
 * The import graph of src/ (docs/architecture.md): data flows one way through the stages, so
 * a module may import only from its own stage or an earlier one, and no set of modules imports
 * itself in a circle. Every static import, `export ... from`, `require()` and dynamic
 * `import()` of a relative path counts, type-only imports included (they are the design's
 * arrows too).
 */
const SRC = path.resolve(__dirname, '..', '..', 'src');
/** Earlier first. util is beneath every stage; the CLI and the library entry sit above all. */
const ORDER = ['util', 'programs', 'trace', 'debugger', 'ndl', 'tokenizer', 'data', 'backend', 'model', 'train', 'eval', 'scaling', 'dap', 'cli', '(root)'];

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

function stageOf(file: string): string {
  const parts = path.relative(SRC, file).split(path.sep);
  return parts.length === 1 ? '(root)' : parts[0];
}

function resolveImport(from: string, spec: string): string | undefined {
  const base = path.resolve(path.dirname(from), spec);
  return [`${base}.ts`, path.join(base, 'index.ts'), base].find((c) => fs.existsSync(c) && fs.statSync(c).isFile() && c.endsWith('.ts'));
}

function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const pattern = /\b(?:import|export)\s[^;'"]*?\bfrom\s*['"](\.[^'"]*)['"]|\bimport\s*['"](\.[^'"]*)['"]|\b(?:require|import)\s*\(\s*['"](\.[^'"]*)['"]\s*\)/g;
  for (const file of sourceFiles(SRC)) {
    const text = fs.readFileSync(file, 'utf8');
    const targets = new Set<string>();
    for (const m of text.matchAll(pattern)) {
      const target = resolveImport(file, m[1] ?? m[2] ?? m[3]);
      if (target) targets.add(target);
    }
    graph.set(file, [...targets]);
  }
  return graph;
}

/** Strongly connected components with more than one file (or a file importing itself): Tarjan. */
function circles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(scc.map((f) => path.relative(SRC, f)).sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

/** Every arrow from a stage to a later one, as `from -> to`. */
function upwardArrows(graph: Map<string, string[]>): string[] {
  const upward: string[] = [];
  for (const [from, targets] of graph) {
    for (const to of targets) {
      if (ORDER.indexOf(stageOf(to)) > ORDER.indexOf(stageOf(from))) upward.push(`${rel(from)} -> ${rel(to)}`);
    }
  }
  return upward;
}

const graph = importGraph();
const rel = (f: string) => path.relative(SRC, f);

describe('src/ import graph', () => {
  it('is read correctly (the check is not vacuous)', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get(path.join(SRC, 'ndl', 'tokens.ts'))!.map(rel)).toContain(path.join('debugger', 'vocabulary.ts'));
    expect(graph.get(path.join(SRC, 'index.ts'))!.map(rel)).toContain(path.join('eval', 'index.ts'));
    // A circle and an upward arrow planted in a copy of the graph are found.
    const planted = new Map(graph);
    planted.set(path.join(SRC, 'util', 'rng.ts'), [path.join(SRC, 'util', 'search.ts')]);
    planted.set(path.join(SRC, 'util', 'search.ts'), [path.join(SRC, 'util', 'rng.ts')]);
    expect(circles(planted)).toContainEqual([path.join('util', 'rng.ts'), path.join('util', 'search.ts')]);
    // backend/ sits below model/: an arrow from the backend stage up to the model is reported.
    const backendFile = path.join(SRC, 'backend', 'backend.ts');
    planted.set(backendFile, [...(graph.get(backendFile) ?? []), path.join(SRC, 'model', 'model.ts')]);
    expect(upwardArrows(planted)).toContain(`${path.join('backend', 'backend.ts')} -> ${path.join('model', 'model.ts')}`);
  });

  it('every folder of sources under src/ is a pipeline stage (or util/cli)', () => {
    const folders = new Set([...graph.keys()].map(stageOf));
    expect([...folders].filter((f) => !ORDER.includes(f))).toEqual([]);
  });

  it('imports point down the pipeline only: never from an earlier stage to a later one', () => {
    expect(upwardArrows(graph)).toEqual([]);
  });

  it('has no circle of imports', () => {
    expect(circles(graph)).toEqual([]);
  });
});
