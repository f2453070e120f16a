"""ndbg's scale-out side: continue an ndbg run with PyTorch DDP and hand the result back.

Modules: rng (ndbg's seeded RNG), data (Arrow shards and the mixture loader, batch for batch
the same as ndbg's), recipe (the run config's optimizer, schedule and decay groups), model
(LlamaForCausalLM with the document mask and ndbg's loss), train (the torchrun entry point).
See docs/scale-out.md.
"""
