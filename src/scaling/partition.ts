import type { ShardSpec } from '../util/shard';

/**
 * Which cells a shard of the sweep trains: longest-processing-time first, by planned FLOPs, each
 * cell to the shard with the least work so far (ties to the lower index). Every shard computes
 * the same assignment from the grid alone, so array tasks need no coordination, every cell
 * belongs to exactly one shard, and the shards' loads stay within one cell of each other.
 */
export function partitionCells<T extends { id: string; flops: number }>(cells: T[], count: number): T[][] {
  const order = [...cells].sort((a, b) => b.flops - a.flops || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const shards: T[][] = Array.from({ length: count }, () => []);
  const load = new Array<number>(count).fill(0);
  for (const c of order) {
    let best = 0;
    for (let i = 1; i < count; i++) if (load[i] < load[best]) best = i;
    shards[best].push(c);
    load[best] += c.flops;
  }
  // Within a shard, the grid's own order (small cells first finish something early).
  const rank = new Map(cells.map((c, i) => [c.id, i]));
  return shards.map((s) => s.sort((a, b) => rank.get(a.id)! - rank.get(b.id)!));
}

export function cellsOfShard<T extends { id: string; flops: number }>(cells: T[], shard: ShardSpec): T[] {
  return partitionCells(cells, shard.count)[shard.index];
}
