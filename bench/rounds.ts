/**
 * When a bench figure may be compared at all. On a shared machine one round of a framework can
 * land in someone else's burst (the recorded 2.93× had a PyTorch peer at 10349 and 5381 tokens/s
 * in its two rounds): a median over rounds that far apart is not a measurement of either, so the
 * bench refuses to build a ratio from it and says by how much the rounds differ.
 */

/** Largest allowed max/min of a framework's per-round tokens/s. */
export const MAX_ROUND_RATIO = 1.25;

export interface RoundVerdict {
  /** max/min of the rounds; null with fewer than two rounds (nothing to compare). */
  maxOverMin: number | null;
  /** Why no ratio may be built from these rounds; undefined when they agree. */
  refused?: string;
  /** Set when the spread could not be checked. */
  unchecked?: string;
}

export function judgeRounds(tokensPerS: readonly number[], limit = MAX_ROUND_RATIO): RoundVerdict {
  const v = tokensPerS.filter((x) => Number.isFinite(x) && x > 0);
  if (v.length !== tokensPerS.length) return { maxOverMin: null, refused: `a round has no valid tokens/s (${tokensPerS.join(', ')})` };
  if (v.length < 2) return { maxOverMin: null, unchecked: 'one round: spread not checked (run --rounds=2 or more)' };
  const max = Math.max(...v);
  const min = Math.min(...v);
  const r = max / min;
  if (r <= limit) return { maxOverMin: round3(r) };
  const below = Math.round((1 - min / max) * 100);
  return {
    maxOverMin: round3(r),
    refused: `rounds differ by ×${r.toFixed(2)} (${Math.round(max)} vs ${Math.round(min)} tokens/s, the slowest ${below}% below the fastest; limit ×${limit})`,
  };
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/** One framework's figure on one shape, as the comparison needs it. */
export interface Figure {
  framework: string;
  tokensPerS: number;
  rounds: number[];
  verdict: RoundVerdict;
}

export type Comparison = { best: string; bestTokensPerS: number; ratio: number; note?: string } | { refused: string };

/**
 * ndbg ÷ the fastest accepted peer. Refused when ndbg's own rounds are, when no peer is
 * accepted, or when a refused peer's fastest round beats the accepted best: that peer might be
 * the best, and a ratio against a slower one would flatter ndbg.
 */
export function compareWithBest(ndbg: Figure, peers: readonly Figure[]): Comparison {
  if (ndbg.verdict.refused) return { refused: `${ndbg.framework}: ${ndbg.verdict.refused}` };
  const accepted = peers.filter((p) => !p.verdict.refused);
  if (!accepted.length) return { refused: peers.length ? `every peer refused (${peers.map((p) => `${p.framework}: ${p.verdict.refused}`).join('; ')})` : 'no peer measured' };
  const best = accepted.reduce((a, b) => (b.tokensPerS > a.tokensPerS ? b : a));
  const rival = peers.find((p) => p.verdict.refused && Math.max(...p.rounds) > best.tokensPerS);
  if (rival) return { refused: `${rival.framework} may be the fastest peer (a round at ${Math.round(Math.max(...rival.rounds))} > ${best.framework}'s ${best.tokensPerS}) but ${rival.verdict.refused}` };
  const unchecked = [ndbg, best].filter((f) => f.verdict.unchecked).map((f) => `${f.framework}: ${f.verdict.unchecked}`);
  return {
    best: best.framework,
    bestTokensPerS: best.tokensPerS,
    ratio: Math.round((ndbg.tokensPerS / best.tokensPerS) * 1000) / 1000,
    ...(unchecked.length ? { note: unchecked.join('; ') } : {}),
  };
}
