#!/usr/bin/env python3
"""torchrun entry point: `torchrun --nproc_per_node N scale/train.py --hf DIR --from CKPT --out DIR`
(see ndbg_scale/train.py and docs/scale-out.md)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ndbg_scale.train import main  # noqa: E402

if __name__ == "__main__":
    main()
