import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

/**
 * The Python interpreter that has the peer libraries tests compare ndbg with (transformers,
 * tokenizers, torch, tensorboard, ...): $NDBG_PEER_PYTHON, else the repository's `.venv/`
 * (made by .ci/setup.d/20-python-peers.sh), else python3. Returns the interpreter when every
 * named module imports, otherwise a reason the caller prints as "skipped: ...".
 */
export function peerPython(modules: string[]): { python: string } | { skip: string } {
  const root = path.resolve(__dirname, '..', '..');
  const candidates = [process.env.NDBG_PEER_PYTHON, path.join(root, '.venv', 'bin', 'python'), 'python3'].filter(
    (p): p is string => !!p && (p === 'python3' || fs.existsSync(p)),
  );
  let last = 'no python3';
  for (const python of candidates) {
    const probe = spawnSync(python, ['-c', modules.map((m) => `import ${m}`).join('; ') || 'pass'], { encoding: 'utf8' });
    if (probe.status === 0) return { python };
    last = `${python} cannot import ${modules.join(', ')}: ${(probe.stderr || '').trim().split('\n').pop()}`;
  }
  return { skip: `${last} (run bash .ci/setup.d/20-python-peers.sh)` };
}
