import { Progress } from '../../src/util/progress';

/** A non-TTY stream (a CI log) that records what was written. */
function logStream(): { stream: NodeJS.WriteStream; lines: () => string[] } {
  const chunks: string[] = [];
  const stream = { isTTY: false, write: (s: string) => (chunks.push(s), true) } as unknown as NodeJS.WriteStream;
  return { stream, lines: () => chunks.join('').split('\n').filter((l) => l) };
}

describe('Progress on a non-TTY stream', () => {
  test('a line per 10% and no repeated last line at finish', () => {
    const { stream, lines } = logStream();
    const p = new Progress('work', 10, stream);
    for (let i = 0; i < 10; i++) p.tick(1, { i });
    p.finish();
    const out = lines();
    expect(out.filter((l) => l.includes('10/10'))).toHaveLength(1);
    expect(out).toHaveLength(10);
  });

  test('finish prints the final state when it changed since the last line', () => {
    const { stream, lines } = logStream();
    const p = new Progress('work', 10, stream);
    p.tick(10);
    p.finish({ loss: 1.5 });
    expect(lines()).toHaveLength(2);
    expect(lines()[1]).toMatch(/10\/10 .*loss=1\.5/);
  });
});
