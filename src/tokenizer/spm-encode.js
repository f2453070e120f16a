'use strict';
/**
 * Fast id extraction from sentencepiece-js, and the worker-thread entry of the Tokenizer's
 * batch encoder (src/tokenizer/encode-pool.ts). Plain JavaScript, read from src/ at run time like the
 * Python helpers, so the same file serves ts-jest, dist/ and worker threads.
 *
 * sentencepiece-js's encodeIds() copies the result vector out of wasm one element at a time
 * through embind, which costs as much as the encoding itself. makeIdsEncoder() reads the
 * std::vector<int>'s [begin, end) pointers from wasm memory and copies the ids in one slice.
 * That relies on libc++'s vector layout, so it is checked against encodeIds() on a sample at
 * start-up and not used if they differ.
 */
const { isMainThread, parentPort, workerData } = require('worker_threads');

const SELF_CHECK = 'def f(x):\uE00A    return x + 12345 \u2581 😀 <|frame_sep|>\t\r'.repeat(8);

/** Returns (escapedText) => Uint32Array of ids for a loaded SentencePieceProcessor. */
function makeIdsEncoder(spp) {
  const slow = (text) => Uint32Array.from(spp.encodeIds(text));
  const M = spp.sentencepiece;
  const fast = (text) => {
    const sv = new M.StringView(text);
    const view = sv.getView();
    const vec = spp.processor.EncodeAsIds(view);
    try {
      const p = vec.$$.ptr >>> 2;
      const heap = M.HEAPU32; // re-read: memory growth replaces the view
      const begin = heap[p] >>> 2;
      const end = heap[p + 1] >>> 2;
      if (end - begin !== vec.size()) throw new Error('unexpected std::vector layout');
      return heap.slice(begin, end);
    } finally {
      vec.delete();
      view.delete();
      sv.delete();
    }
  };
  try {
    const a = fast(SELF_CHECK);
    const b = slow(SELF_CHECK);
    if (a.length === b.length && a.every((x, i) => x === b[i])) return fast;
  } catch (e) {
    // fall through to the slow, layout-independent path
  }
  return slow;
}

module.exports = { makeIdsEncoder };

// Worker entry:
//   in:  { id, texts: string[] }            (already escaped)
//   out: { id, ids: Uint32Array, offsets: Uint32Array }  text i is ids[offsets[i]..offsets[i+1])
//        or { id, error: string }
if (!isMainThread && workerData && workerData.ndbgEncodeWorker) {
  const { SentencePieceProcessor } = require(workerData.spmModule);
  const spp = new SentencePieceProcessor();
  const ready = spp.load(workerData.modelPath).then(() => makeIdsEncoder(spp));

  parentPort.on('message', async (msg) => {
    try {
      const encode = await ready;
      const parts = msg.texts.map((t) => encode(t));
      let total = 0;
      for (const p of parts) total += p.length;
      const ids = new Uint32Array(total);
      const offsets = new Uint32Array(parts.length + 1);
      let at = 0;
      parts.forEach((p, i) => {
        offsets[i] = at;
        ids.set(p, at);
        at += p.length;
      });
      offsets[parts.length] = at;
      parentPort.postMessage({ id: msg.id, ids, offsets }, [ids.buffer, offsets.buffer]);
    } catch (e) {
      parentPort.postMessage({ id: msg.id, error: String((e && e.stack) || e) });
    }
  });
}
