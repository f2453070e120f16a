/**
 * Learning-rate schedules as pure functions of the optimizer step, so the "schedule position"
 * saved in a checkpoint is just the step: resuming at step s gives the same LR as never stopping.
 *
 * Steps are 0-based: `lrAt(cfg, 0)` is the LR of the first update. Warmup is linear from
 * peak/warmup (not 0, so the first update is not wasted) up to the peak at step warmup-1.
 */
export type ScheduleConfig =
  | { kind: 'constant'; peak_lr: number; warmup_steps: number }
  | { kind: 'cosine'; peak_lr: number; warmup_steps: number; min_lr: number; decay_steps?: number }
  | {
      kind: 'wsd';
      peak_lr: number;
      warmup_steps: number;
      min_lr: number;
      /** Fraction of the total steps spent in the final decay (warmup-stable-decay). */
      decay_fraction: number;
      decay_shape: 'linear' | 'cosine' | 'sqrt';
    };

/** LR for the update at 0-based `step` of a run of `totalSteps` updates. */
export function lrAt(cfg: ScheduleConfig, step: number, totalSteps: number): number {
  const warm = cfg.warmup_steps;
  if (warm > 0 && step < warm) return (cfg.peak_lr * (step + 1)) / warm;
  switch (cfg.kind) {
    case 'constant':
      return cfg.peak_lr;
    case 'cosine': {
      // Cosine spans the steps after warmup up to decay_steps (default: the whole run) and
      // then holds the floor; progress reaches 1 exactly on the last update.
      const end = cfg.decay_steps ?? totalSteps;
      const span = Math.max(1, end - warm - 1);
      const progress = Math.min(1, Math.max(0, (step - warm) / span));
      return cfg.min_lr + 0.5 * (cfg.peak_lr - cfg.min_lr) * (1 + Math.cos(Math.PI * progress));
    }
    case 'wsd': {
      const decaySteps = Math.max(1, Math.round(cfg.decay_fraction * totalSteps));
      const decayStart = totalSteps - decaySteps;
      if (step < decayStart) return cfg.peak_lr;
      const progress = Math.min(1, (step - decayStart + 1) / decaySteps);
      const shape =
        cfg.decay_shape === 'linear'
          ? 1 - progress
          : cfg.decay_shape === 'sqrt'
            ? 1 - Math.sqrt(progress)
            : 0.5 * (1 + Math.cos(Math.PI * progress));
      return cfg.min_lr + (cfg.peak_lr - cfg.min_lr) * shape;
    }
  }
}
