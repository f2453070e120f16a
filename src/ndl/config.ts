/**
 * Sampler options (spec ndl.md §5), validated with zod so `ndbg ndl --config/--set` can change
 * any of them and a typo is an error. Defaults are the paper's policy (appendix A.1).
 */
import { z } from 'zod';

const prob = z.number().min(0).finite();

const forwardProbs = z
  .object({
    step_into: prob.default(0),
    step_over: prob.default(0),
    step_return: prob.default(0),
    breakpoint: prob.default(0),
    continue: prob.default(0),
  })
  .strict();

const inverseProbs = z
  .object({
    inv_step_into: prob.default(0),
    inv_step_over: prob.default(0),
    inv_step_call: prob.default(0),
  })
  .strict();

export const samplerConfigSchema = z
  .object({
    /** Forward actions: a mixture of distributions, each renormalized over the available actions. */
    forwardMixture: z
      .array(z.object({ weight: z.number().positive().finite(), probs: forwardProbs }).strict())
      .min(1)
      .default([
        { weight: 0.5, probs: { step_into: 0.35, step_over: 0.1, step_return: 0.2, breakpoint: 0.1, continue: 0.05 } },
        { weight: 0.5, probs: { step_into: 0.5, step_over: 0.5, step_return: 0, breakpoint: 0, continue: 0 } },
      ]),
    inverseProbs: inverseProbs.default({ inv_step_into: 0.5, inv_step_over: 0.3, inv_step_call: 0.2 }),
    /**
     * Forward: take step_into at the harness's `main` frames up to the entry function's call,
     * and start drawing from the policy there. Without it, the policy's step_over/step_return/
     * continue at `main` skip the whole program in most documents (63% on CruxEval).
     */
    enterEntry: z.boolean().default(true),
    /** Probability that a breakpoint targets a line never reached again (so the model learns EXIT). */
    unreachedBreakpointProb: z.number().min(0).max(1).default(0.1),
    /** Most event frames in one document (EXIT is not a frame). */
    maxFrames: z.number().int().min(1).default(256),
    /** Most tokens in one document (approximate counter, see docs/ndl.md); null: no token budget. */
    maxTokens: z.number().int().min(1).nullable().default(null),
    /** Relative shares of forward and inverse documents (default 1:1). */
    forwardShare: z.number().min(0).finite().default(1),
    inverseShare: z.number().min(0).finite().default(1),
  })
  .strict()
  .refine((c) => c.forwardShare + c.inverseShare > 0, { message: 'forwardShare + inverseShare must be positive' });

export type SamplerConfig = z.infer<typeof samplerConfigSchema>;

export function defaultSamplerConfig(): SamplerConfig {
  return samplerConfigSchema.parse({});
}
