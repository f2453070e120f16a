/**
 * The SRC of a repository-level document (docs/ndl.md, "Repository documents"): the source of
 * the entry function and of the functions it calls, with their file names, within a token
 * budget. The rule, in full:
 *
 * 1. The functions are those of the scope's invocations (the entry's and every call below it),
 *    each the innermost def block of its file containing the code's first line (a lambda or
 *    comprehension is its enclosing function), in order of first call; the entry comes first.
 *    A block inside another chosen block is not listed again (its text is in the outer one).
 * 2. Blocks are taken in that order while the SRC stays within the budget; the entry's block is
 *    always taken. Those left out are counted (scope.omitted), never cut in the middle.
 * 3. The text: one section per file, files in order of their first taken block; a section is
 *    the line `# file: PATH` (the path relative to the repository root) and then its blocks in
 *    line order, each its file lines verbatim from the first decorator line to the last line,
 *    preceded by the `class` header line of each enclosing class that the block before it in
 *    the section did not share. Blocks and sections are separated by one blank line.
 */
import type { FunctionBlock } from '../trace/repo';
import type { TokenCounter } from './sampler';

export interface ChosenBlock {
  file: string;
  block: FunctionBlock;
}

/** The innermost block of `blocks` that contains line `line`, or undefined. */
export function innermostBlock(blocks: FunctionBlock[] | null | undefined, line: number): FunctionBlock | undefined {
  let best: FunctionBlock | undefined;
  for (const b of blocks ?? []) {
    if (b[0] <= line && line <= b[2] && (!best || b[2] - b[0] <= best[2] - best[0])) best = b;
  }
  return best;
}

function contains(outer: ChosenBlock, inner: ChosenBlock): boolean {
  return outer.file === inner.file && outer.block[0] <= inner.block[0] && inner.block[2] <= outer.block[2];
}

/** Rule 3: the text of the chosen blocks. */
export function renderContext(chosen: ChosenBlock[], files: Record<string, string>): string {
  const order: string[] = [];
  for (const c of chosen) if (!order.includes(c.file)) order.push(c.file);
  const sections = order.map((file) => {
    const lines = (files[file] ?? '').split('\n');
    const blocks = chosen.filter((c) => c.file === file).map((c) => c.block).sort((a, b) => a[0] - b[0]);
    const parts: string[] = [];
    let classes: number[] = [];
    for (const [start, , end, enclosing] of blocks) {
      const shared = classes.filter((c, k) => enclosing[k] === c).length;
      const headers = enclosing.slice(shared).map((c) => lines[c - 1]);
      parts.push([...headers, ...lines.slice(start - 1, end)].join('\n'));
      classes = enclosing;
    }
    return `# file: ${file}\n${parts.join('\n\n')}`;
  });
  return sections.join('\n\n');
}

/**
 * Rules 1 and 2: `candidates` are the scope's (file, block) in order of first call, entry
 * first; returns the taken blocks, the SRC text and how many were left out for the budget.
 */
export function fitContext(
  candidates: ChosenBlock[],
  files: Record<string, string>,
  budget: number,
  count: TokenCounter,
): { chosen: ChosenBlock[]; text: string; omitted: number } {
  const distinct: ChosenBlock[] = [];
  for (const c of candidates) {
    if (distinct.some((d) => contains(d, c))) continue;
    // A later block that holds earlier ones replaces them (rule 1: no text twice).
    for (let k = distinct.length - 1; k >= 0; k--) if (contains(c, distinct[k])) distinct.splice(k, 1);
    distinct.push(c);
  }
  const chosen: ChosenBlock[] = [];
  let omitted = 0;
  let text = '';
  for (const c of distinct) {
    const next = renderContext([...chosen, c], files);
    if (chosen.length > 0 && count(next) > budget) {
      omitted++;
      continue;
    }
    chosen.push(c);
    text = next;
  }
  return { chosen, text, omitted };
}
