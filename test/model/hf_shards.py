"""transformers as the peer of ndbg's sharded Hugging Face files.

Usage: python hf_shards.py HF_DIR OUT_DIR MAX_SHARD_BYTES IDS_JSON
Loads HF_DIR (ndbg's export) with AutoModelForCausalLM as a user would, prints its logits on
IDS, then saves the weights twice with save_pretrained(max_shard_size=MAX_SHARD_BYTES):
  OUT_DIR/fresh     from a LlamaForCausalLM built from the config (state_dict in module order,
                    as a model trained in transformers is saved): ndbg's index must equal it
  OUT_DIR/reloaded  from the loaded model itself; transformers 5 then sorts the tensors by
                    name (revert_weight_conversion), so its shards differ: ndbg must import them
Prints JSON: logits, missing/unexpected keys of the load, and the files of each save.
"""
import json
import os
import sys

import torch
from transformers import AutoModelForCausalLM, LlamaForCausalLM

hf_dir, out_dir, max_bytes, ids = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
model, info = AutoModelForCausalLM.from_pretrained(hf_dir, dtype=torch.float32, output_loading_info=True)
model.eval()
with torch.no_grad():
    logits = model(torch.tensor(ids)).logits.tolist()
fresh = LlamaForCausalLM(model.config)
fresh.load_state_dict(model.state_dict())
fresh.save_pretrained(os.path.join(out_dir, "fresh"), max_shard_size=max_bytes)
model.save_pretrained(os.path.join(out_dir, "reloaded"), max_shard_size=max_bytes)
json.dump(
    {
        "logits": logits,
        "missing": sorted(info.get("missing_keys", [])),
        "unexpected": sorted(info.get("unexpected_keys", [])),
        "files": {d: sorted(os.listdir(os.path.join(out_dir, d))) for d in ("fresh", "reloaded")},
    },
    sys.stdout,
)
