#!/usr/bin/env python3
"""Fine-tune a Hugging Face sequence classifier with `import tandem`, as a user would.

A BertForSequenceClassification (a small config, random weights: nothing is downloaded)
is exported with torch.onnx.export (training mode, so that nothing it trains is folded) and
fine-tuned by tandem.TrainingSession with the cross-entropy loss on integer labels, AdamW,
on a generated sentiment task: sentences of 6 to 32 token ids (padded to 32, the padding
masked through attention_mask, so every batch mixes lengths) that hold one to three words
of one class among neutral ones; the label is that class. Then:
  - the accuracy on held-out sentences, before and after;
  - the trained model exported back to ONNX (TrainingSession.export) and run by
    tandem.Session, against PyTorch given the same trained weights (read from the exported
    file): the largest logit difference at the logits' scale;
  - the first steps' losses against PyTorch fine-tuning the same initial weights on the same
    batches.
Exits 1 when the accuracy stays below 0.9 or PyTorch disagrees.

Needs numpy, torch, onnx and transformers (bench/setup_torch2_env.sh makes such an
environment) and the tandem module (PYTHONPATH/TANDEM_LIBRARY of a build, or installed).
usage: python_text_classifier.py [OUT_DIR] [EPOCHS]
"""
import os
import sys
import warnings

import numpy as np
import onnx
import torch
import transformers
from onnx import numpy_helper

import tandem

SEQ, VOCAB, CLASSES = 32, 1000, 2
LR, WEIGHT_DECAY, BATCH = 1e-3, 0.01, 32
CLASS_WORDS = [range(10, 100), range(100, 190)]  # ids of each class's words; 200+ neutral


def sentences(n, seed):
    """(input_ids, attention_mask, labels) of n generated sentences."""
    rng = np.random.default_rng(seed)
    ids = np.zeros((n, SEQ), dtype=np.int64)  # 0: padding
    mask = np.zeros((n, SEQ), dtype=np.int64)
    labels = rng.integers(0, CLASSES, n).astype(np.int64)
    for i in range(n):
        length = int(rng.integers(6, SEQ + 1))
        words = rng.integers(200, VOCAB, length)
        where = rng.choice(np.arange(1, length), size=int(rng.integers(1, 4)), replace=False)
        words[where] = rng.choice(list(CLASS_WORDS[labels[i]]), size=len(where))
        words[0] = 1  # a [CLS]-like first token, read by the pooler
        ids[i, :length] = words
        mask[i, :length] = 1
    return ids, mask, labels


def build(seed=0):
    torch.manual_seed(seed)
    config = transformers.BertConfig(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                                     intermediate_size=128, max_position_embeddings=SEQ, num_labels=CLASSES,
                                     hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return transformers.BertForSequenceClassification(config).train()


class Logits(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask).logits


def export(module, path):
    ids, mask, _ = sentences(2, 0)
    warnings.filterwarnings("ignore")
    torch.onnx.export(Logits(module), (torch.from_numpy(ids), torch.from_numpy(mask)), path, dynamo=False,
                      input_names=["input_ids", "attention_mask"], output_names=["logits"],
                      dynamic_axes={"input_ids": {0: "batch"}, "attention_mask": {0: "batch"}, "logits": {0: "batch"}},
                      opset_version=17, training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)


def accuracy(logits, labels):
    return float(np.mean(np.argmax(logits, axis=1) == labels))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(2)
    module = build()
    initial = {k: v.clone() for k, v in module.state_dict().items()}
    model_path = os.path.join(out, "text_classifier.onnx")
    export(module, model_path)
    ids, mask, labels = sentences(2000, 1)
    test_ids, test_mask, test_labels = sentences(500, 2)
    test = {"input_ids": test_ids, "attention_mask": test_mask}
    order = [np.random.default_rng(3 + e).permutation(len(labels)) for e in range(epochs)]
    batches = [o[i:i + BATCH] for o in order for i in range(0, len(o) - BATCH + 1, BATCH)]

    with tandem.TrainingSession(model_path, loss="cross_entropy", optimizer="adamw", lr=LR,
                                weight_decay=WEIGHT_DECAY, threads=2) as ts:
        before = accuracy(ts.predict(test)[0], test_labels)
        losses = []
        for step, rows in enumerate(batches):
            losses.append(ts.train_step({"input_ids": ids[rows], "attention_mask": mask[rows]}, labels[rows]))
            if (step + 1) % (len(batches) // epochs) == 0:
                print(f"epoch {(step + 1) * epochs // len(batches)}/{epochs}: loss {np.mean(losses[-20:]):.4f}")
        after = accuracy(ts.predict(test)[0], test_labels)
        trained_path = os.path.join(out, "text_classifier_trained.onnx")
        ts.export(trained_path)
    print(f"held-out accuracy ({len(test_labels)} sentences): {before:.3f} before, {after:.3f} after "
          f"{len(batches)} steps")

    # The exported model against PyTorch given the same (trained) weights.
    with tandem.Session(trained_path) as s:
        served = s.run(test)["logits"]
    trained = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in onnx.load(trained_path).graph.initializer}
    reference = build()
    state = reference.state_dict()
    loaded = {k: trained["model." + k] for k in state if "model." + k in trained}  # exported through Logits
    reference.load_state_dict({**state, **loaded})
    with torch.no_grad():
        want = Logits(reference.eval())(torch.from_numpy(test_ids), torch.from_numpy(test_mask)).numpy()
    export_error = float(np.max(np.abs(served - want)) / np.max(np.abs(want)))
    print(f"exported model vs PyTorch with its weights ({len(loaded)}/{len(state)} tensors read back): "
          f"max |diff| {export_error:.2e} of the logits' scale, accuracy {accuracy(served, test_labels):.3f}")

    # The first steps against PyTorch fine-tuning the same initial weights on the same batches.
    module.load_state_dict(initial)
    opt = torch.optim.AdamW(module.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    steps = 30
    ref = []
    for rows in batches[:steps]:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(Logits(module)(torch.from_numpy(ids[rows]), torch.from_numpy(mask[rows])),
                                                 torch.from_numpy(labels[rows]))
        loss.backward()
        opt.step()
        ref.append(loss.item())
    rel = np.abs(np.array(losses[:steps]) - np.array(ref)) / np.abs(np.array(ref))
    print(f"losses of the first {steps} steps vs PyTorch: max relative difference {rel.max():.2e} "
          f"(step {int(rel.argmax()) + 1}; last {losses[steps - 1]:.5f} vs {ref[-1]:.5f})")
    ok = after >= 0.9 and export_error <= 1e-4 and len(loaded) == len(state) and rel.max() <= 1e-3
    print("OK" if ok else "FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
