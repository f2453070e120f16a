import * as fs from 'fs';
import * as path from 'path';
import { maybeFault } from './fault';
import { fsyncDir, writeFileDurable, type FileContents } from '../util/fsync';

/**
 * Atomic checkpoint directories under RUN_DIR/checkpoints/:
 *
 *   step-00000120/            a complete checkpoint (COMPLETE lists every file and its size)
 *   .tmp-step-00000140-PID/   being written; never read, removed by the next writer
 *   .del-step-00000100-PID/   being deleted; never read, removed by the next writer
 *
 * Writing: files into the temp dir (each fsynced), then COMPLETE (fsynced), then the temp dir
 * fsynced, renamed to its final name, and the parent fsynced. A reader trusts a directory only
 * if COMPLETE exists and every file it lists has the listed size, so a crash at any point
 * leaves either the new checkpoint complete or the previous ones untouched.
 * Deleting: rename away first (atomic), then remove, so no half-deleted dir keeps its name.
 */
export const MARKER = 'COMPLETE';
const NAME_RE = /^step-(\d+)$/;

export interface CheckpointFile {
  name: string;
  /** A writer streams files too large for one Buffer (model and optimizer safetensors). */
  data: FileContents;
}

export interface CheckpointInfo {
  step: number;
  dir: string;
}

export function checkpointsRoot(runDir: string): string {
  return path.join(runDir, 'checkpoints');
}

export function checkpointName(step: number): string {
  return `step-${String(step).padStart(8, '0')}`;
}

/** Writes a checkpoint atomically; returns its final directory. */
export function writeCheckpointDir(runDir: string, step: number, files: CheckpointFile[]): string {
  const root = checkpointsRoot(runDir);
  fs.mkdirSync(root, { recursive: true });
  removeStale(root);
  const name = checkpointName(step);
  const tmp = path.join(root, `.tmp-${name}-${process.pid}`);
  fs.mkdirSync(tmp);
  maybeFault('tmp-created', step);
  const sizes: Record<string, number> = {};
  for (const f of files) {
    if (f.name === MARKER || f.name.includes('/')) throw new Error(`bad checkpoint file name ${f.name}`);
    writeFileDurable(path.join(tmp, f.name), f.data);
    sizes[f.name] = fs.statSync(path.join(tmp, f.name)).size;
    if (f.name === 'model.safetensors') maybeFault('weights-written', step);
    if (f.name === 'optimizer.safetensors') maybeFault('optimizer-written', step);
  }
  writeFileDurable(path.join(tmp, MARKER), JSON.stringify({ step, files: sizes }, null, 1) + '\n');
  fsyncDir(tmp);
  maybeFault('marker-written', step);
  const final = path.join(root, name);
  // A checkpoint of the same step exists only if an earlier run got past the rename and then
  // died; it is complete by construction, but replace it so the files match this run exactly.
  if (fs.existsSync(final)) deleteDir(root, final, step);
  fs.renameSync(tmp, final);
  maybeFault('renamed', step);
  fsyncDir(root);
  return final;
}

/** True when `dir` has a valid COMPLETE marker and every file it lists has the listed size. */
export function isComplete(dir: string): boolean {
  let marker: { files?: Record<string, number> };
  try {
    marker = JSON.parse(fs.readFileSync(path.join(dir, MARKER), 'utf8')) as typeof marker;
  } catch {
    return false;
  }
  if (!marker.files || typeof marker.files !== 'object') return false;
  for (const [name, size] of Object.entries(marker.files)) {
    try {
      if (fs.statSync(path.join(dir, name)).size !== size) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/** Complete checkpoints, oldest first. Temp, deleted and incomplete directories are ignored. */
export function listCheckpoints(runDir: string): CheckpointInfo[] {
  const root = checkpointsRoot(runDir);
  if (!fs.existsSync(root)) return [];
  const out: CheckpointInfo[] = [];
  for (const entry of fs.readdirSync(root)) {
    const m = NAME_RE.exec(entry);
    if (!m) continue;
    const dir = path.join(root, entry);
    if (isComplete(dir)) out.push({ step: Number(m[1]), dir });
  }
  return out.sort((a, b) => a.step - b.step);
}

export function latestCheckpoint(runDir: string): CheckpointInfo | undefined {
  const all = listCheckpoints(runDir);
  return all[all.length - 1];
}

/**
 * Keeps the `keepLast` newest complete checkpoints plus every permanent one (step a multiple of
 * `keepEvery`, when > 0); deletes the rest, and any incomplete step dir older than the newest.
 * With `every` (train.checkpoint_every) > 0, a checkpoint off that cadence that is not the newest
 * (one a signal stopped the run at, which its resume has gone past) is deleted and takes no place
 * among the newest: the run directory, and the average of its newest checkpoints, end as they
 * would have without the stop.
 */
export function pruneCheckpoints(runDir: string, keepLast: number, keepEvery: number, currentStep = -1, every = 0): void {
  const root = checkpointsRoot(runDir);
  const all = listCheckpoints(runDir);
  const newestDir = all[all.length - 1]?.dir;
  const complete = all.filter((c) => every === 0 || c.step % every === 0 || c.dir === newestDir);
  const keep = new Set(complete.slice(Math.max(0, complete.length - keepLast)).map((c) => c.dir));
  for (const c of all) if (keepEvery > 0 && c.step % keepEvery === 0) keep.add(c.dir);
  const newest = all[all.length - 1]?.step ?? -1;
  for (const entry of fs.readdirSync(root)) {
    const m = NAME_RE.exec(entry);
    if (!m) continue;
    const dir = path.join(root, entry);
    const step = Number(m[1]);
    if (keep.has(dir)) continue;
    if (!all.some((c) => c.dir === dir) && step >= newest) continue; // not ours to judge
    deleteDir(root, dir, currentStep);
  }
}

/** `faultStep` is the step being written, for the fault-injection hook only. */
function deleteDir(root: string, dir: string, faultStep: number): void {
  const trash = path.join(root, `.del-${path.basename(dir)}-${process.pid}`);
  fs.renameSync(dir, trash);
  fsyncDir(root);
  // Remove the marker first so even a copied-out half-deleted dir never looks complete.
  fs.rmSync(path.join(trash, MARKER), { force: true });
  maybeFault('pruning', faultStep);
  fs.rmSync(trash, { recursive: true, force: true });
}

/** Removes leftovers of writers or deleters that died (there is one writer per run dir). */
function removeStale(root: string): void {
  for (const entry of fs.readdirSync(root)) {
    if (entry.startsWith('.tmp-') || entry.startsWith('.del-')) {
      fs.rmSync(path.join(root, entry), { recursive: true, force: true });
    }
  }
}
