"""The floors of docs/ARCHITECTURE.md's folder table, checked: each folder's sources include
only the folders it may use. A quoted include "a/b.h" belongs to the longest folder of
FOLDERS that prefixes it; angle-bracket includes (system and package headers) are not
judged. Prints each include that breaks a rule, with its file and line; exit 1 if any.

usage: layering_check.py ROOT
"""
import os
import re
import sys

# folder -> the folders its sources may include (its own always). Order: floors upwards.
RULES = {
    "graph": set(),
    "onnx_import": {"graph"},
    "ops": {"graph"},
    "framework": {"graph", "ops"},
    "placement": {"graph", "ops", "framework"},
    "providers/cpu": {"graph", "ops", "framework", "placement"},
    "providers/cuda": {"graph", "ops", "framework", "placement"},
    "distributed": {"graph", "ops", "framework"},
    "optimizer": {"graph", "ops", "framework", "placement"},
    "runtime": {"graph", "onnx_import", "ops", "framework", "placement", "optimizer"},
    "training": {"graph", "onnx_import", "ops", "framework", "placement", "distributed", "optimizer", "runtime"},
    "c_api": {"graph", "onnx_import", "ops", "framework", "placement", "distributed", "optimizer", "runtime",
              "training", "include"},
    "cli": {"graph", "onnx_import", "ops", "framework", "placement", "distributed", "optimizer", "runtime",
            "training"},
}
FOLDERS = sorted(RULES, key=len, reverse=True)  # the longest prefix first
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = (".h", ".cc", ".cu", ".cuh")


def folder_of(path):
    """The folder of RULES that holds `path` (relative to the root), or None."""
    for f in FOLDERS:
        if path == f or path.startswith(f + "/"):
            return f
    if path.startswith("include/"):
        return "include"
    return None


def main(root):
    broken = 0
    for folder in RULES:
        base = os.path.join(root, folder)
        for dirpath, dirnames, files in os.walk(base):
            rel_dir = os.path.relpath(dirpath, root)
            if folder_of(rel_dir) != folder:  # a deeper folder with rules of its own
                dirnames[:] = []
                continue
            for name in sorted(files):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8", errors="replace") as src:
                    for number, line in enumerate(src, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = folder_of(os.path.dirname(m.group(1)))
                        if target is None or target == folder or target in RULES[folder]:
                            continue
                        broken += 1
                        print(f"{os.path.relpath(path, root)}:{number}: includes {m.group(1)} "
                              f"({target}/), which {folder}/ may not use")
    print(f"layering: {broken} include(s) against docs/ARCHITECTURE.md's folder table")
    return 1 if broken else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
