'use strict';
/**
 * Worker thread of the Tokenizer's batch encoder (src/tokenizer/pool.ts). Plain JavaScript,
 * read from src/ at run time like the Python helpers, so the same file serves ts-jest and
 * dist/. It only runs sentencepiece: the parent escapes the texts (src/tokenizer/escape.ts)
 * and validates the model before starting workers.
 *
 * in:  { id, texts: string[] }            (already escaped)
 * out: { id, ids: Uint32Array, offsets: Uint32Array }  text i is ids[offsets[i]..offsets[i+1])
 *      or { id, error: string }
 */
const { parentPort, workerData } = require('worker_threads');
const { SentencePieceProcessor } = require(workerData.spmModule);

const spp = new SentencePieceProcessor();
const ready = spp.load(workerData.modelPath);

parentPort.on('message', async (msg) => {
  try {
    await ready;
    const parts = msg.texts.map((t) => spp.encodeIds(t));
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
