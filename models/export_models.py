#!/usr/bin/python3
"""Exports the reference models to ONNX with fixed seeds.

usage: models/export_models.py [OUT_DIR] [--all]
Without --all only the models not committed to the repo are written (cifar_cnn);
with --all every model is (re)written. OUT_DIR defaults to this folder.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_models import MODELS, export, parameter_count  # noqa: E402


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = args[0] if args else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out, exist_ok=True)
    for i, (name, (make, shape, committed)) in enumerate(MODELS.items()):
        if committed and "--all" not in sys.argv:
            continue
        torch.manual_seed(1000 + i)
        module = make()
        path = os.path.join(out, name + ".onnx")
        export(module, shape, path)
        print(f"{path}: {parameter_count(module):,} parameters")


if __name__ == "__main__":
    main()
