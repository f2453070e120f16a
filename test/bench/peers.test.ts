import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { BenchUsageError } from '../../bench/flags';
import { productFlops, shapeProducts } from '../../bench/matmul_rate';
import { parseKeyValues, peerEnv, peerList, torchArgs } from '../../bench/peers';
import { loadModelConfig, modelStats, resolveModelConfig } from '../../src/model/config';

const root = path.join(__dirname, '..', '..');
const venv = path.join(root, '.venv/bin/python');

describe('peerList', () => {
  it('runs every mode at 1 and 2 threads with each Python by default', () => {
    const names = peerList([], '/v/python').map((p) => p.name);
    expect(names).toHaveLength(12);
    expect(names.slice(0, 6)).toEqual([
      'pytorch eager 1t (.venv pip)', 'pytorch eager 2t (.venv pip)', 'pytorch sdpa 1t (.venv pip)',
      'pytorch sdpa 2t (.venv pip)', 'pytorch compile 1t (.venv pip)', 'pytorch compile 2t (.venv pip)',
    ]);
    expect(peerList([], '/v/python')[11]).toEqual({ name: 'pytorch compile 2t (debian python3-torch)', python: '/usr/bin/python3', mode: 'compile', threads: 2, device: 'cpu' });
  });

  it('narrows by flag, adds a Python, and names the CUDA peers', () => {
    const p = peerList(['--torch=none', '--torch-python=/x/py', '--torch-modes=compile', '--torch-threads=2', '--torch-device=cuda'], '/v/python');
    expect(p).toEqual([{ name: 'pytorch compile cuda 2t (/x/py)', python: '/x/py', mode: 'compile', threads: 2, device: 'cuda' }]);
  });

  it('refuses unknown modes, bad thread counts and devices', () => {
    expect(() => peerList(['--torch-modes=eager,jit'], 'v')).toThrow(BenchUsageError);
    expect(() => peerList(['--torch-threads=0'], 'v')).toThrow(/--torch-threads/);
    expect(() => peerList(['--torch-device=tpu'], 'v')).toThrow(/cpu or cuda/);
  });
});

describe('torchArgs', () => {
  const c = resolveModelConfig({ vocab_size: 2048, d_model: 128, n_layers: 3, n_heads: 4, n_kv_heads: 2, d_ff: 320, max_seq_len: 512, rope_theta: 500000 });
  it('passes every dimension of the config, d_ff and GQA included, and the mode', () => {
    const [compile] = peerList(['--torch=venv', '--torch-modes=compile', '--torch-threads=2'], 'v');
    const a = torchArgs(compile, c, 4, 6, 0, true);
    const get = (k: string) => a[a.indexOf(`--${k}`) + 1];
    expect([get('vocab'), get('d'), get('layers'), get('heads'), get('kv-heads'), get('ff'), get('seq'), get('theta'), get('eps'), get('batch')])
      .toEqual(['2048', '128', '3', '4', '2', '320', '512', '500000', '0.00001', '4']);
    // compile's first step compiles: at least one warm-up step even when asked for none
    expect([get('warmup'), get('sdpa'), get('compile'), get('threads'), get('device'), get('matmul')]).toEqual(['1', '1', '1', '2', 'cpu', '1']);
    const [eager] = peerList(['--torch=venv', '--torch-modes=eager', '--torch-threads=1'], 'v');
    const e = torchArgs(eager, c, 4, 6, 0, false);
    expect([e[e.indexOf('--warmup') + 1], e[e.indexOf('--sdpa') + 1], e[e.indexOf('--compile') + 1]]).toEqual(['0', '0', '0']);
  });
});

describe('parseKeyValues', () => {
  it('reads the script line, numbers as numbers', () => {
    expect(parseKeyValues('torch=2.13.0+cpu blas=openblas median_step_s=0.1530 tokens_per_s=13386 loss=7.333\n')).toEqual({
      torch: '2.13.0+cpu', blas: 'openblas', median_step_s: 0.153, tokens_per_s: 13386, loss: 7.333,
    });
  });
});

describe('the products ndbg and the torch peer time', () => {
  it('are the forward matmuls of the step: 3× their FLOPs is the 6·N part of the FLOP formula', () => {
    for (const cfg of ['configs/quickstart.json', 'configs/tiny.json', 'configs/small.json']) {
      const c = loadModelConfig(path.join(root, cfg));
      const tokens = 4 * c.max_seq_len;
      expect(productFlops(shapeProducts(c, 4)) * 3).toBe(6 * modelStats(c).matmulParams * tokens);
    }
  });

  const haveTorch = fs.existsSync(venv) && spawnSync(venv, ['-c', 'import torch'], { encoding: 'utf8' }).status === 0;
  if (!haveTorch) console.log('skipped: the torch peer shape check (no .venv with torch)');
  (haveTorch ? it : it.skip)("match the torch script's model: its matmul parameters equal ndbg's, d_ff and GQA included, and its product list", () => {
    const c = resolveModelConfig({ vocab_size: 512, d_model: 64, n_layers: 2, n_heads: 4, n_kv_heads: 2, d_ff: 160, max_seq_len: 32 });
    const [peer] = peerList(['--torch=venv', '--torch-modes=eager', '--torch-threads=1'], venv);
    const argv = torchArgs(peer, c, 3, 1, 0, false);
    const code = [
      'import sys, json; sys.path.insert(0, "bench"); sys.argv = ["x"] + sys.argv[1:]',
      'import torch_ref_train as t; a = t.parse_args(); m = t.GPT(a)',
      'print(json.dumps({"matmul": t.matmul_params(m), "all": sum(p.numel() for p in m.parameters()), "products": t.products(a)}))',
    ].join('\n');
    const r = spawnSync(venv, ['-c', code, ...argv], { cwd: root, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout);
    const s = modelStats(c);
    expect(out.matmul).toBe(s.matmulParams);
    expect(out.all).toBe(s.params);
    expect(out.products).toEqual(shapeProducts(c, 3).map((p) => [p.m, p.k, p.n, p.transposeB ? 1 : 0]));
  });
});

describe('the BLAS the torch peer reports', () => {
  const haveTorch = fs.existsSync(venv) && spawnSync(venv, ['-c', 'import torch'], { encoding: 'utf8' }).status === 0;
  if (!haveTorch) console.log('skipped: the torch peer BLAS label (no .venv with torch)');
  (haveTorch ? it : it.skip)("is the library torch's matmuls run on, not numpy's OpenBLAS, with MKL's code path on this CPU", () => {
    const code = [
      'import sys, re, torch; sys.path.insert(0, "bench")',
      'import torch_ref_train as t',
      'info = re.search(r"BLAS_INFO=([^,\\s]+)", torch.__config__.show()).group(1)',
      'class A: device = "cpu"; sdpa = 0; compile = 0; warmup = 0',
      'print(info, t.check_runtime(A()))',
    ].join('\n');
    const r = spawnSync(venv, ['-c', code], { cwd: root, encoding: 'utf8' });
    expect(r.status).toBe(0);
    const [info, label] = r.stdout.trim().split(' ');
    // pip's torch links MKL statically and imports numpy, whose OpenBLAS is then mapped too:
    // the label follows the build's BLAS_INFO, and for MKL says which kernels MKL chose here.
    if (info === 'mkl') expect(label).toMatch(/^mkl\/(avx512|avx2|generic|unknown)$/);
    else expect(label).not.toMatch(/^mkl/);
  });
});

describe('peerEnv', () => {
  test("runs the peer without the machine's OpenBLAS core pinning, keeping everything else", () => {
    const saved = { ...process.env };
    try {
      process.env.OPENBLAS_CORETYPE = 'Haswell';
      process.env.OPENBLAS_L2_SIZE = '512';
      process.env.NDBG_PEER_PROBE = 'kept';
      const env = peerEnv();
      expect(env.OPENBLAS_CORETYPE).toBeUndefined();
      expect(env.OPENBLAS_L2_SIZE).toBeUndefined();
      expect(env.NDBG_PEER_PROBE).toBe('kept');
      expect(process.env.OPENBLAS_CORETYPE).toBe('Haswell');
    } finally {
      process.env = saved;
    }
  });
});
