/**
 * Worker thread body for EncodePool: loads the tokenizer once, then answers
 * `{ id, texts }` with `{ id, docs: [{ ids, mask }] }` (buffers transferred, not copied).
 */
import { parentPort, workerData } from 'worker_threads';
import { loadTextTokenizer } from './tokenizer';
import { frameDocument, specialIds, type MaskOptions } from './pack';

interface Init {
  tokenizer: string;
  mask: MaskOptions;
}

async function main(): Promise<void> {
  const init = workerData as Init;
  const tok = await loadTextTokenizer(init.tokenizer);
  const ids = specialIds(tok);
  parentPort!.on('message', (msg: { id: number; texts: string[] }) => {
    try {
      const docs = msg.texts.map((t) => frameDocument(tok.encode(t), ids, init.mask));
      const transfer = docs.flatMap((d) => [d.ids.buffer, d.mask.buffer]) as ArrayBuffer[];
      parentPort!.postMessage({ id: msg.id, docs }, transfer);
    } catch (e) {
      parentPort!.postMessage({ id: msg.id, error: (e as Error).message });
    }
  });
  parentPort!.postMessage({ ready: true });
}

main().catch((e) => parentPort!.postMessage({ fatal: (e as Error).message }));
