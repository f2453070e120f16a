/**
 * A decode worker (decode_pool.ts): loads the checkpoint named in its argument on the parent's
 * backend, then answers each request with the texts a ModelCompleter of the request's options
 * decodes. It exits with its parent.
 */
import { loadModelCompleter } from './load';
import { PromptTooLongError } from './completer';
import { ModelCompleter } from './model_completer';
import type { DecodeReply, DecodeRequest, DecodeWorkerSpec } from './decode_pool';

const reply = (m: DecodeReply) => process.send?.(m);

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2]) as DecodeWorkerSpec;
  const base = await loadModelCompleter({ checkpoint: spec.checkpoint, backend: spec.backend as never });
  // One completer per distinct options (SRC free or constrained), so their caches are kept.
  const completers = new Map<string, ModelCompleter>();
  const completerFor = (options: Record<string, unknown>) => {
    const key = JSON.stringify(options);
    if (!completers.has(key)) completers.set(key, new ModelCompleter(base.model, base.tokenizer, options as never));
    return completers.get(key)!;
  };
  process.on('message', (r: DecodeRequest) => {
    completerFor(r.completer)
      .completeFrames(r.prefixes, r.options)
      .then((texts) => reply({ id: r.id, texts }))
      .catch((e: Error) => reply({ id: r.id, error: e.message, tooLong: e instanceof PromptTooLongError ? { tokens: e.tokens, seqLen: e.seqLen } : undefined }));
  });
  reply({ ready: true });
}

process.on('disconnect', () => process.exit(0));
main().catch((e: Error) => {
  reply({ fatal: e.message });
  process.exit(1);
});
