/**
 * A compressed JSONL file as a stream of its decompressed bytes, read chunk by chunk so a
 * multi-GB web dump never sits in memory. gzip is node's zlib (concatenated members, as
 * `pigz` and many dump tools write them, included); zstd is fzstd, because the zlib of Node 20
 * has no zstd and fzstd is pure JavaScript (no native build step on the user's machine).
 */
import * as fs from 'fs';
import { pipeline, Transform, type Readable, type TransformCallback } from 'stream';
import * as zlib from 'zlib';
import { Decompress } from 'fzstd';

class ZstdDecompressStream extends Transform {
  // fzstd hands out views of its window buffer, which it reuses: copy each chunk out.
  private readonly decoder = new Decompress((chunk) => {
    this.push(Buffer.from(chunk));
  });

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    try {
      this.decoder.push(chunk);
      done();
    } catch (e) {
      done(e as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    try {
      this.decoder.push(new Uint8Array(0), true);
      done();
    } catch (e) {
      done(e as Error);
    }
  }
}

/** The decompressed bytes of `file`; a corrupt input surfaces as an error on the returned stream. */
export function openDecompressed(file: string, codec: 'gzip' | 'zstd'): Readable {
  const decoder = codec === 'gzip' ? zlib.createGunzip() : new ZstdDecompressStream();
  // pipeline forwards a read error of the file to the decoder, which the consumer reads.
  return pipeline(fs.createReadStream(file), decoder, () => undefined);
}
