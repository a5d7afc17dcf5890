#!/usr/bin/env python3
"""Load an llm-train checkpoint with transformers' LlamaForCausalLM and score the run's fixed
validation batches: the loss must equal llm-train's val_loss at that step to fp32 rounding.

    python3 bench/hf_check.py RUN_DIR        (needs torch and transformers)

RUN_DIR is an llm-train run directory whose last step evaluated (the run always evaluates at
its last step when --eval-every > 0) and saved a full checkpoint (it always does at the end).
Prints one JSON line; exits 1 when the difference exceeds 1e-4.
"""
import json
import os
import sys

import torch
import torch.nn.functional as F
from transformers import LlamaForCausalLM


def main():
    run = sys.argv[1]
    ckpt = os.path.join(run, "ckpt", "latest")
    state = json.load(open(os.path.join(ckpt, "state.json")))
    ours = None
    for line in open(os.path.join(run, "metrics.jsonl")):
        rec = json.loads(line)
        if rec.get("step") == state["step"] and "val_loss" in rec:
            ours = rec["val_loss"]
    if ours is None:
        sys.exit("hf_check: no val_loss at step %d in %s/metrics.jsonl" % (state["step"], run))
    model = LlamaForCausalLM.from_pretrained(ckpt, torch_dtype=torch.float32)
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for line in open(os.path.join(run, "val_batches.jsonl")):
            b = json.loads(line)
            x = torch.tensor([b["inputs"]])
            y = torch.tensor(b["labels"])
            logits = model(input_ids=x).logits[0]
            total += F.cross_entropy(logits.double(), y, reduction="sum").item()
            count += len(b["labels"])
    hf = total / count
    diff = abs(hf - ours)
    print(json.dumps({"step": state["step"], "llm_train_val_loss": ours, "transformers_loss": hf,
                      "abs_diff": diff, "transformers": __import__("transformers").__version__,
                      "torch": torch.__version__}))
    sys.exit(0 if diff <= 1e-4 else 1)


if __name__ == "__main__":
    main()
