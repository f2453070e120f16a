/**
 * Packed rows → Arrow shard files of at most rowsPerShard rows, named
 * `<split>/<source>-NNNNN.arrow` and written atomically, each with its manifest entry. The one
 * place `ndbg data build` and `ndbg data merge` write shards, so both cut and name them alike.
 */
import * as path from 'path';
import { replaceFileAtomic } from '../util/fsync';
import type { ShardEntry } from './manifest';
import { encodeShard, sha256Hex, type ShardIdentity } from './shard';

/** Rows → shard files, as `ndbg data build` cuts and names them. */
export class ShardSink {
  readonly shards: ShardEntry[] = [];
  private readonly tokens: Uint16Array | Uint32Array;
  private readonly mask: Uint8Array;
  private readonly docIds: Int32Array;
  private rows = 0;

  constructor(
    private readonly dir: string,
    private readonly rowsPerShard: number,
    private readonly rowLen: number,
    private readonly identity: Omit<ShardIdentity, 'index'>,
  ) {
    const n = rowsPerShard * rowLen;
    this.tokens = identity.tokenDtype === 'uint16' ? new Uint16Array(n) : new Uint32Array(n);
    this.mask = new Uint8Array(n);
    this.docIds = new Int32Array(n);
  }

  add(t: Uint32Array, m: Uint8Array, d: Int32Array): void {
    const at = this.rows * this.rowLen;
    this.tokens.set(t, at);
    this.mask.set(m, at);
    this.docIds.set(d, at);
    if (++this.rows === this.rowsPerShard) this.flush();
  }

  flush(): void {
    if (this.rows === 0) return;
    const n = this.rows * this.rowLen;
    const index = this.shards.length;
    const bytes = encodeShard(
      { rows: this.rows, rowLen: this.rowLen, tokens: this.tokens.subarray(0, n), mask: this.mask.subarray(0, n), docIds: this.docIds.subarray(0, n) },
      { ...this.identity, index },
    );
    const rel = `${this.identity.split}/${this.identity.source}-${String(index).padStart(5, '0')}.arrow`;
    replaceFileAtomic(path.join(this.dir, rel), bytes);
    // Count targets (positions 1..T) so a stream's row-overlap token is not counted twice.
    let tokens = 0;
    for (let r = 0; r < this.rows; r++) {
      for (let i = r * this.rowLen + 1; i < (r + 1) * this.rowLen; i++) tokens += this.docIds[i] >= 0 ? 1 : 0;
    }
    this.shards.push({ file: rel, rows: this.rows, tokens, bytes: bytes.length, sha256: sha256Hex(bytes) });
    this.rows = 0;
  }
}

