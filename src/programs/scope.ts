import { Rng } from '../util/rng';
import type { GeneratorConfig } from './config';
import type { Ty } from './ir';
import { wideName } from './values';

/**
 * Lexical bookkeeping for one function being generated: which names exist with which type,
 * which may be mutated (iterated containers and loop counters may not: that is what keeps
 * every loop bounded), and which (index, sequence) pairs make `seq[i]` safe.
 */
export interface Var {
  name: string;
  ty: Ty;
}

export class Scope {
  private readonly vars: Var[] = [];
  private readonly frozen = new Set<string>();
  private readonly pairs: Array<{ index: string; seq: string }> = [];

  constructor(
    readonly fn: FnState,
    readonly parent?: Scope,
    /** Nesting level of blocks (0 = function body). */
    readonly level = 0,
    /** Innermost enclosing loop kind, for break/continue. */
    readonly loop: 'none' | 'for' | 'while' = 'none',
    /** Number of enclosing loops (growth rules apply when > 0). */
    readonly loopDepth = 0,
  ) {}

  child(loop?: 'for' | 'while'): Scope {
    return new Scope(this.fn, this, this.level + 1, loop ?? this.loop, this.loopDepth + (loop ? 1 : 0));
  }

  add(name: string, ty: Ty): void {
    this.vars.push({ name, ty });
    this.fn.used.add(name);
  }

  freeze(name: string): void {
    this.frozen.add(name);
  }

  pair(index: string, seq: string): void {
    this.pairs.push({ index, seq });
  }

  /** Visible variables, most recent first. */
  all(): Var[] {
    const out: Var[] = [];
    for (let s: Scope | undefined = this; s; s = s.parent) for (let i = s.vars.length - 1; i >= 0; i--) out.push(s.vars[i]);
    return out;
  }

  isFrozen(name: string): boolean {
    const root = name.split(/[.[]/)[0];
    for (let s: Scope | undefined = this; s; s = s.parent) if (s.frozen.has(name) || s.frozen.has(root)) return true;
    return false;
  }

  indexPairs(): Array<{ index: string; seq: string }> {
    const out: Array<{ index: string; seq: string }> = [];
    for (let s: Scope | undefined = this; s; s = s.parent) out.push(...s.pairs);
    return out;
  }

  /** A visible variable of type `ty`, biased toward recent ones (data flows forward). */
  pick(ty: Ty, opts: { writable?: boolean } = {}): Var | undefined {
    const cands = this.all().filter((v) => v.ty === ty && (!opts.writable || !this.isFrozen(v.name)));
    if (cands.length === 0) return undefined;
    const rng = this.fn.rng;
    return rng.bool(0.45) ? cands[0] : rng.choice(cands);
  }

  has(ty: Ty): boolean {
    return this.all().some((v) => v.ty === ty);
  }
}

export interface ClassInfo {
  name: string;
  initParams: Ty[];
  attrs: Var[];
  methods: Array<{ name: string; params: Ty[]; ret: Ty }>;
}

/** Per-function state shared by all its scopes. */
export class FnState {
  readonly used: Set<string>;
  /** Off until the planned statements (helper calls, raises) are placed, so none is skipped. */
  allowEarlyReturn = true;
  constructor(
    readonly rng: Rng,
    readonly cfg: GeneratorConfig,
    globalNames: Iterable<string>,
    /** Return type of the function being generated. */
    readonly ret: Ty,
    /** Treat the whole body as if inside a loop (method bodies: called repeatedly). */
    readonly repeated = false,
    /** The stream of `cfg.wideNames` (absent: names come from the pools only). */
    private readonly names?: Rng,
  ) {
    this.used = new Set(globalNames);
  }

  /** `share`: the chance of a wide name here (default `cfg.wideNames`); one draw of the names stream either way. */
  fresh(pool: string[], share = this.cfg.wideNames): string {
    const free = pool.filter((n) => !this.used.has(n));
    // One draw of the main stream either way, so a wide name changes no other choice.
    let name: string;
    if (free.length) name = this.rng.choice(free);
    else {
      const base = this.rng.choice(pool);
      let i = 2;
      while (this.used.has(`${base}${i}`)) i++;
      name = `${base}${i}`;
    }
    if (this.names?.bool(share)) {
      do name = wideName(this.names);
      while (this.used.has(name));
    }
    this.used.add(name);
    return name;
  }
}
