/**
 * The training stream: rows from several sources, mixed by weight, shuffled within bounded
 * windows, cut into batches [B, T+1] (TokenBatch, batch.ts). Its whole state is a few integers per source (see
 * LoaderState); every row's position is a pure function of (seed, source, epoch, row counter),
 * so restoring a state continues with exactly the next batch, and no worker count enters.
 *
 * - Mixing: row i of the stream goes to the source s maximizing w_s*(i+1) - taken_s (ties: the
 *   first source), Megatron's BlendedDataset rule. Realized proportions track the weights to
 *   within one row at every prefix, with no randomness to drift.
 * - Order inside a source, per epoch e: its shards in an order permuted by Rng(seed, source, e);
 *   inside a shard, consecutive windows of `shuffleWindow` rows each permuted by
 *   Rng(seed, source, e, shard, window). Memory: one shard per source plus one batch.
 */
import { UserError } from '../util/errors';
import { Rng } from '../util/rng';
import { upperBound } from '../util/search';
import { batchFromRows, type TokenBatch } from './batch';
import { loadShard, openDatasets, type OpenedDataset, type OpenedSource } from './dataset';
import type { ShardData } from './shard';

export interface LoaderOptions {
  /** Data set directories (built by `ndbg data build`); their sources are mixed together. */
  datasets: string[];
  /** Source name -> weight (any positive scale). Omitted: proportional to each source's train tokens. */
  weights?: Record<string, number>;
  batchSize: number;
  seed: number;
  /** Rows per shuffle window (bounded shuffle). Default 4096. */
  shuffleWindow?: number;
  /** sha256-check every shard as it is loaded (default true); false checks size and structure only. */
  verifySha256?: boolean;
  /** The trainer's tokenizer sha256: refuse a data set built with another. */
  tokenizerSha256?: string;
}

/** A training batch (the row layout and lossMask meaning are TokenBatch's, batch.ts) and where it came from. */
export interface LoaderBatch extends TokenBatch {
  /** Batches taken before this one (0 for the first). */
  step: number;
  docIds: Int32Array;
  /** [batchSize]: index into `sourceNames` of each row's source. */
  sources: Uint8Array;
}

export interface LoaderState {
  version: 1;
  fingerprint: string;
  seed: number;
  batchSize: number;
  shuffleWindow: number;
  /** Normalized weights, by source name. */
  weights: Record<string, number>;
  /** Batches produced so far. */
  step: number;
  /** Rows taken per source since the start (epoch and position are derived; shown for people). */
  sources: Record<string, { taken: number; epoch: number; position: number }>;
}

/** Where a source stands; the cached shard and window are derived and rebuilt on demand. */
class SourceStream {
  taken = 0;
  private shardOrder: number[] = [];
  private orderEpoch = -1;
  private starts: number[] = [];
  private loadedShard = -1;
  private shard: ShardData | undefined;
  private windowKey = '';
  private windowPerm: Uint32Array = new Uint32Array(0);

  constructor(
    readonly src: OpenedSource,
    private readonly seed: number,
    private readonly window: number,
    private readonly verify: boolean,
  ) {}

  /** Copies the next row into the batch at row b and advances. */
  takeRow(b: number, rowLen: number, tokens: Int32Array, mask: Uint8Array, docIds: Int32Array): void {
    const n = this.src.rows;
    const epoch = Math.floor(this.taken / n);
    const pos = this.taken % n;
    if (epoch !== this.orderEpoch) this.setEpoch(epoch);
    let k = upperBound(this.starts, pos) - 1;
    while (this.src.shards[this.shardOrder[k]].entry.rows === 0) k++;
    const shardIdx = this.shardOrder[k];
    const offset = pos - this.starts[k];
    if (shardIdx !== this.loadedShard) {
      this.shard = undefined; // release before loading the next: at most one shard per source
      this.shard = loadShard(this.src, shardIdx, 'train', this.verify);
      this.loadedShard = shardIdx;
    }
    const shard = this.shard!;
    const w = Math.floor(offset / this.window);
    const key = `${epoch}:${shardIdx}:${w}`;
    if (key !== this.windowKey) {
      const lo = w * this.window;
      const size = Math.min(this.window, shard.rows - lo);
      const perm = Array.from({ length: size }, (_, i) => i);
      Rng.from(this.seed, 'rows', this.src.name, epoch, shardIdx, w).shuffle(perm);
      this.windowPerm = Uint32Array.from(perm);
      this.windowKey = key;
    }
    const row = w * this.window + this.windowPerm[offset - w * this.window];
    const from = row * rowLen;
    const to = b * rowLen;
    const t = shard.tokens;
    for (let i = 0; i < rowLen; i++) tokens[to + i] = t[from + i];
    mask.set(shard.mask.subarray(from, from + rowLen), to);
    docIds.set(shard.docIds.subarray(from, from + rowLen), to);
    this.taken++;
  }

  private setEpoch(epoch: number): void {
    const order = this.src.shards.map((_, i) => i);
    Rng.from(this.seed, 'shards', this.src.name, epoch).shuffle(order);
    this.shardOrder = order;
    this.starts = [];
    let acc = 0;
    for (const i of order) {
      this.starts.push(acc);
      acc += this.src.shards[i].entry.rows;
    }
    this.orderEpoch = epoch;
  }
}

export class MixtureLoader {
  readonly sourceNames: string[];
  readonly rowLen: number;
  readonly seqLen: number;
  readonly dataset: OpenedDataset;
  private readonly streams: SourceStream[];
  private readonly weights: number[];
  private step = 0;

  constructor(readonly options: LoaderOptions, state?: LoaderState) {
    const { batchSize, seed } = options;
    const window = options.shuffleWindow ?? 4096;
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new UserError(`loader batchSize must be a positive integer, got ${batchSize}`);
    if (!Number.isInteger(seed)) throw new UserError(`loader seed must be an integer, got ${seed}`);
    if (!Number.isInteger(window) || window < 1) throw new UserError(`loader shuffleWindow must be a positive integer, got ${window}`);
    this.dataset = openDatasets(options.datasets, 'train', { tokenizerSha256: options.tokenizerSha256 });
    this.rowLen = this.dataset.rowLen;
    this.seqLen = this.dataset.seqLen;
    const all = this.dataset.sources;
    if (all.length > 255) throw new UserError('at most 255 sources can be mixed');
    const raw = options.weights ?? Object.fromEntries(all.map((s) => [s.name, s.tokens]));
    for (const name of Object.keys(raw)) {
      if (!all.some((s) => s.name === name)) throw new UserError(`weights: no source "${name}" in ${options.datasets.join(', ')} (have: ${all.map((s) => s.name).join(', ')})`);
      if (!(raw[name] >= 0) || !isFinite(raw[name])) throw new UserError(`weights.${name}: must be a non-negative number, got ${raw[name]}`);
    }
    const chosen = all.filter((s) => (raw[s.name] ?? 0) > 0);
    if (!chosen.length) throw new UserError('weights: at least one source needs a positive weight');
    for (const s of chosen) if (s.rows === 0) throw new UserError(`source ${s.name} (${s.manifestFile}) has no training rows but weight ${raw[s.name]}`);
    const total = chosen.reduce((a, s) => a + raw[s.name], 0);
    this.sourceNames = chosen.map((s) => s.name);
    this.weights = chosen.map((s) => raw[s.name] / total);
    this.streams = chosen.map((s) => new SourceStream(s, seed, window, options.verifySha256 ?? true));
    if (state) this.restore(state);
  }

  /** The serializable state: restore it (constructor or restore()) to continue with the next batch. */
  state(): LoaderState {
    return {
      version: 1,
      fingerprint: this.dataset.fingerprint,
      seed: this.options.seed,
      batchSize: this.options.batchSize,
      shuffleWindow: this.options.shuffleWindow ?? 4096,
      weights: Object.fromEntries(this.sourceNames.map((n, i) => [n, this.weights[i]])),
      step: this.step,
      sources: Object.fromEntries(
        this.streams.map((s) => [s.src.name, { taken: s.taken, epoch: Math.floor(s.taken / s.src.rows), position: s.taken % s.src.rows }]),
      ),
    };
  }

  restore(state: LoaderState): void {
    const cur = this.state();
    const bad = (what: string, got: unknown, want: unknown) =>
      new UserError(`loader state does not fit this loader: ${what} is ${JSON.stringify(got)} in the state, ${JSON.stringify(want)} here`);
    if (!state || state.version !== 1) throw bad('version', state?.version, 1);
    if (state.fingerprint !== cur.fingerprint) throw bad('data set fingerprint', state.fingerprint, cur.fingerprint);
    if (state.seed !== cur.seed) throw bad('seed', state.seed, cur.seed);
    if (state.batchSize !== cur.batchSize) throw bad('batchSize', state.batchSize, cur.batchSize);
    if (state.shuffleWindow !== cur.shuffleWindow) throw bad('shuffleWindow', state.shuffleWindow, cur.shuffleWindow);
    for (const name of new Set([...Object.keys(state.weights ?? {}), ...this.sourceNames])) {
      if (Math.abs((state.weights?.[name] ?? 0) - (cur.weights[name] ?? 0)) > 1e-12) throw bad(`weights.${name}`, state.weights?.[name], cur.weights[name]);
    }
    let rows = 0;
    for (const s of this.streams) {
      const taken = state.sources?.[s.src.name]?.taken;
      if (!Number.isInteger(taken) || taken! < 0) throw bad(`sources.${s.src.name}.taken`, taken, 'a non-negative integer');
      s.taken = taken!;
      rows += taken!;
    }
    if (rows !== state.step * state.batchSize) throw bad('rows taken in total', rows, state.step * state.batchSize);
    this.step = state.step;
  }

  /** Source index for the next row (the blending rule in the module comment). */
  private pickSource(): number {
    let rows = 0;
    for (const s of this.streams) rows += s.taken;
    let best = 0;
    let bestGap = -Infinity;
    for (let i = 0; i < this.streams.length; i++) {
      const gap = this.weights[i] * (rows + 1) - this.streams[i].taken;
      if (gap > bestGap) {
        bestGap = gap;
        best = i;
      }
    }
    return best;
  }

  next(): LoaderBatch {
    const B = this.options.batchSize;
    const L = this.rowLen;
    const ids = new Int32Array(B * L);
    const lossMask = new Uint8Array(B * L);
    const docIds = new Int32Array(B * L);
    const sources = new Uint8Array(B);
    for (let b = 0; b < B; b++) {
      const s = this.pickSource();
      sources[b] = s;
      this.streams[s].takeRow(b, L, ids, lossMask, docIds);
    }
    return { ...batchFromRows(B, L, ids, lossMask, docIds), step: this.step++, docIds, sources };
  }

  *[Symbol.iterator](): Iterator<LoaderBatch> {
    for (;;) yield this.next();
  }
}
