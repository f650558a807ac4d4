#!/usr/bin/env python3
"""Writes the current ONNX backend test suite (node and simple model tests) as test folders
(model.onnx + test_data_set_*/input_*.pb, output_*.pb) for `tandem test-onnx`.

usage: generate_suite.py OUT_DIR      (run with the python of .venv-onnx, which
                                      tools/onnx_suite/setup_onnx_env.sh makes)

The onnx wheel carries the suite as Python cases (onnx/backend/test/case/node/*.py),
not as data, and its `backend-test-tools generate-data` writes only the model cases. This
hands onnx's own writer (onnx.backend.test.cmd_tools.generate_data) the node cases too,
so every file is written by onnx itself. 'real' cases (downloads) are left out.
"""
import argparse
import sys
import types

import onnx
import onnx.backend.test.case.model as model_cases
import onnx.backend.test.case.node as node_cases
import onnx.backend.test.cmd_tools as cmd_tools


def main():
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    out = sys.argv[1]
    cases = [c for c in node_cases.collect_testcases() + model_cases.collect_testcases() if c.kind != "real"]
    cmd_tools.model_test = types.SimpleNamespace(collect_testcases=lambda: cases)
    cmd_tools.generate_data(argparse.Namespace(output=out))
    kinds = {}
    for c in cases:
        kinds[c.kind] = kinds.get(c.kind, 0) + 1
    print(f"onnx {onnx.__version__}: wrote " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) +
          f" test folders under {out}")


if __name__ == "__main__":
    main()
