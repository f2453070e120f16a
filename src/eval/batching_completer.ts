/**
 * Gathers the completeFrame calls that independent callers make at the same time (scripted
 * debug sessions run side by side) into one completeFrames call of the completer underneath,
 * so a model decodes them as batches (model/generate_batch.ts). Each caller gets the text it
 * would get alone.
 */
import type { PromptBudget } from './budget';
import type { TextCompleter } from './completer';
import type { PredictOptions } from './types';

interface Pending {
  prefix: string;
  resolve: (text: string) => void;
  reject: (error: unknown) => void;
}

export class BatchingCompleter implements TextCompleter {
  readonly name: string;
  readonly budget?: PromptBudget;
  /** Waiting calls, by their options (one completeFrames call per distinct options). */
  private readonly queue = new Map<string, { options: PredictOptions; calls: Pending[] }>();
  private scheduled = false;

  constructor(private readonly inner: TextCompleter & Required<Pick<TextCompleter, 'completeFrames'>>) {
    this.name = inner.name;
    this.budget = inner.budget;
  }

  completeFrame(prefix: string, options: PredictOptions = {}): Promise<string> {
    return new Promise((resolve, reject) => {
      const key = JSON.stringify(options);
      const group = this.queue.get(key) ?? { options, calls: [] };
      group.calls.push({ prefix, resolve, reject });
      this.queue.set(key, group);
      if (!this.scheduled) {
        this.scheduled = true;
        // After the callers that are ready have queued their next call.
        setImmediate(() => void this.flush());
      }
    });
  }

  completeFrames(prefixes: string[], options?: PredictOptions): Promise<string[]> {
    return this.inner.completeFrames(prefixes, options);
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const groups = [...this.queue.values()];
    this.queue.clear();
    for (const { options, calls } of groups) {
      try {
        const texts = await this.inner.completeFrames(calls.map((c) => c.prefix), options);
        calls.forEach((c, i) => c.resolve(texts[i]));
      } catch {
        // One prompt's error (e.g. it does not fit) must reach only its caller: answer one by one.
        for (const c of calls) await this.inner.completeFrame(c.prefix, options).then(c.resolve, c.reject);
      }
    }
  }
}
