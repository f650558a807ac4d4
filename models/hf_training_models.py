"""Transformers to train, built from Hugging Face `transformers` configs (random weights,
nothing downloaded), shared by bench/transformer_training_bench.py and the transformer
training parity test (tests/parity/transformer_training_parity.py).

- CONFIGS: encoder (BERT) and decoder-only (GPT-2) models at two sizes each, dropout 0 so
  that every engine computes the same function; `build(name, seed)` makes one.
- LastHidden: the model's last hidden state for (input_ids, attention_mask), the output the
  MSE objective reads.
- export_for_training(): the legacy (TorchScript) exporter in training mode, opset 17,
  dynamic batch: what `tandem train` imports.
- token_batch(): random ids with a third of the rows padded (attention_mask 0) past 3/4 of
  the sequence, as variable-length batches are.
Needs torch and transformers (bench/setup_torch2_env.sh makes such an environment).
"""
import contextlib
import sys
import warnings

import numpy as np
import torch

# name -> (model class, config class, config overrides, vocabulary size)
CONFIGS = {
    "bert-tiny": ("BertModel", "BertConfig",
                  dict(hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=512), 30522),
    "minilm": ("BertModel", "BertConfig",
               dict(hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536), 30522),
    "gpt2-tiny": ("GPT2Model", "GPT2Config", dict(n_embd=128, n_layer=2, n_head=2, use_cache=False), 50257),
    "gpt2-mini": ("GPT2Model", "GPT2Config", dict(n_embd=384, n_layer=6, n_head=6, use_cache=False), 50257),
}
NO_DROPOUT = {"BertConfig": dict(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0),
              "GPT2Config": dict(resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)}


class LastHidden(torch.nn.Module):
    """The wrapped model's last hidden state for (input_ids, attention_mask)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask)[0]


def build(name, seed=0):
    """CONFIGS[name] with seeded random weights, in training mode (dropout is 0 anyway)."""
    import transformers
    model_class, config_class, overrides, _ = CONFIGS[name]
    torch.manual_seed(seed)
    config = getattr(transformers, config_class)(**overrides, **NO_DROPOUT[config_class])
    return LastHidden(getattr(transformers, model_class)(config)).train()


def vocabulary(name):
    return CONFIGS[name][3]


def token_batch(vocab, rows, seq, seed):
    """{input_ids, attention_mask} int64 [rows, seq]: a third of the rows padded past 3/4."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, vocab, (rows, seq), dtype=np.int64)
    mask = np.ones((rows, seq), dtype=np.int64)
    mask[::3, seq * 3 // 4:] = 0
    return {"input_ids": ids, "attention_mask": mask}


def export_for_training(module, feeds, path):
    """Writes `module` (its current weights) as ONNX for `tandem train`: the legacy exporter
    in training mode (no folding of what training changes), opset 17, batch dim dynamic."""
    args = tuple(torch.from_numpy(v[:1]) for v in feeds.values())
    dynamic = {name: {0: "batch"} for name in [*feeds, "y"]}
    with warnings.catch_warnings(), contextlib.redirect_stdout(sys.stderr):
        warnings.simplefilter("ignore")  # the exporter's tracer warnings about Python control flow
        torch.onnx.export(module, args, path, dynamo=False, input_names=list(feeds), output_names=["y"],
                          dynamic_axes=dynamic, opset_version=17, training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False)
