/**
 * A decoding constraint that forbids writing any n-gram of tokens twice (the `no_repeat_ngram_size`
 * of Hugging Face's generate): the next token may not complete an n-gram the text already holds.
 * A small model sometimes loops on a value (`[[-1, 1, 1, 1, …`) until its token limit cuts the
 * answer; decoding such an answer again under this ban makes it close.
 */
import type { GenerateOptions } from './generate';

type AllowedTokens = NonNullable<GenerateOptions['allowedTokens']>;

/** The tokens that would complete an n-gram `generated` already holds. */
export function repeatedNgramEnds(generated: readonly number[], n: number): Set<number> {
  const banned = new Set<number>();
  const start = generated.length - (n - 1);
  if (n < 1 || start < 0) return banned;
  for (let i = 0; i + n - 1 < generated.length; i++) {
    let same = true;
    for (let k = 0; k < n - 1 && same; k++) same = generated[i + k] === generated[start + k];
    if (same) banned.add(generated[i + n - 1]);
  }
  return banned;
}

/**
 * `allowed` (any of `vocabSize` ids where undefined) less the tokens that would repeat an n-gram.
 * Where that leaves nothing, `allowed` stands: a constraint must not be emptied.
 */
export function withoutRepeatedNgrams(allowed: AllowedTokens | undefined, n: number, vocabSize: number): AllowedTokens {
  return (generated) => {
    const base = allowed?.(generated);
    const banned = repeatedNgramEnds(generated, n);
    if (banned.size === 0) return base;
    const ids = base ? [...base] : Array.from({ length: vocabSize }, (_, id) => id);
    const left = ids.filter((id) => !banned.has(id));
    return left.length > 0 ? new Set(left) : base;
  };
}
