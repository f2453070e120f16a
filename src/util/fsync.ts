import * as fs from 'fs';
import * as path from 'path';

/**
 * Durable file-system helpers (checkpoints, shards, results): a file is on disk only after its own fsync, and
 * a new or renamed directory entry only after its parent directory's fsync.
 */
/**
 * Writes a file's contents into an open descriptor: for files too large for one Buffer
 * (safetensors checkpoints are streamed tensor by tensor).
 */
export type FileWriter = (fd: number) => void;

/** File contents: text, bytes, or a writer that streams them. */
export type FileContents = string | Uint8Array | FileWriter;

export function writeFileDurable(file: string, data: FileContents): void {
  const fd = fs.openSync(file, 'w');
  try {
    if (typeof data === 'function') {
      data(fd);
    } else {
      let offset = 0;
      const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      while (offset < buf.length) offset += fs.writeSync(fd, buf, offset, buf.length - offset);
    }
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch (e) {
    // Some file systems refuse fsync on a directory (EINVAL/EISDIR); the rename is still atomic.
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EINVAL' && code !== 'EISDIR' && code !== 'EPERM') throw e;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** Replaces `file` atomically: write a sibling temp file, fsync it, rename, fsync the folder. */
export function replaceFileAtomic(file: string, data: string | Uint8Array): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.tmp-${process.pid}`);
  writeFileDurable(tmp, data);
  fs.renameSync(tmp, file);
  fsyncDir(path.dirname(file));
}

/**
 * replaceFileAtomic for streamed contents: `write` fills the temp file through its descriptor;
 * if it throws, the temp file is removed and `file` keeps its previous contents.
 */
export function replaceFileAtomicWith(file: string, write: FileWriter): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.tmp-${process.pid}`);
  try {
    writeFileDurable(tmp, write);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  fs.renameSync(tmp, file);
  fsyncDir(path.dirname(file));
}

/**
 * Creates directory `dir` atomically: `fill` writes into a sibling temp directory, which is
 * renamed into place only when it returns; on failure the temp directory is removed, so `dir`
 * is either complete or absent. Refuses an existing `dir`.
 */
export function writeDirAtomic(dir: string, fill: (tmp: string) => void): void {
  const tmp = path.join(path.dirname(path.resolve(dir)), `.${path.basename(path.resolve(dir))}.tmp-${process.pid}`);
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  try {
    fill(tmp);
    fs.renameSync(tmp, dir);
  } catch (e) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  fsyncDir(path.dirname(path.resolve(dir)));
}
