"""Loads an `ndbg export-hf` directory with transformers as a user would (AutoTokenizer,
AutoModelForCausalLM, no extra arguments) and prints what the test compares with ndbg.

Usage: python hf_transformers_check.py HF_DIR REQUEST.json
REQUEST: {"texts": [...], "logit_ids": [[...], ...], "skip_text": "..."}
Prints JSON: tokenizer facts, ids and decodings of every text, and the model's logits.
"""
import json
import sys

import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer

hf_dir, request_file = sys.argv[1], sys.argv[2]
with open(request_file, encoding="utf-8") as f:
    req = json.load(f)

tok = AutoTokenizer.from_pretrained(hf_dir)
ids = [tok(text)["input_ids"] for text in req["texts"]]
out = {
    "transformers": transformers.__version__,
    "class": type(tok).__name__,
    "len": len(tok),
    "bos": tok.bos_token_id,
    "eos": tok.eos_token_id,
    "pad": tok.pad_token_id,
    "special_ids": sorted(tok.all_special_ids),
    "ids": ids,
    "decoded": [tok.decode(i) for i in ids],
    "skip_decoded": tok.decode(tok(req["skip_text"])["input_ids"], skip_special_tokens=True),
}
model = AutoModelForCausalLM.from_pretrained(hf_dir, dtype=torch.float32)
model.eval()
with torch.no_grad():
    out["logits"] = model(torch.tensor(req["logit_ids"])).logits.tolist()
json.dump(out, sys.stdout)
