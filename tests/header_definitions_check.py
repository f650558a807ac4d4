"""No two headers define the same function of the same namespace with different bodies.

Functions defined in headers are inline (or templates): when two headers define one of the
same name, namespace and parameter types, a program that includes both in different
translation units has two definitions of one function, and the linker keeps either (in an
unoptimised build nothing is inlined, so the link order decides what every caller gets).
That happened once: two `tandem::NumericCast` with different rules for out-of-range floats.

Reads every .h/.cuh under the given folders, finds the functions defined at namespace scope
(not class members) and reports each name that two headers define with the same parameter
types and different bodies. Exit 1 when there is one.

usage: header_definitions_check.py ROOT [FOLDER...]   (folders relative to ROOT)
"""
import os
import re
import sys

IDENT = re.compile(r"[A-Za-z_]\w*")


def strip_comments_and_strings(text):
    """The text with comments, string and character literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def without_preprocessor(text):
    return "\n".join("" if line.lstrip().startswith("#") else line for line in text.split("\n"))


def matching(text, i, open_c, close_c):
    """The index just past the bracket that closes the one at text[i]."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == open_c:
            depth += 1
        elif text[j] == close_c:
            depth -= 1
            if depth == 0:
                return j + 1
    return len(text)


def parameter_types(params):
    """The parameter list's types: names and default values dropped, spaces normalised."""
    types, depth, cur = [], 0, ""
    params = params.replace("<<", " shl ")  # a shift in a default value, not a bracket
    for c in params + ",":
        if c in "<([":
            depth += 1
        elif c in ">)]":
            depth -= 1
        if c == "," and depth == 0:
            p = cur.split("=")[0].strip()
            tokens = re.findall(r"\w+|::|[^\s\w]", p)
            if len(tokens) > 1 and IDENT.fullmatch(tokens[-1]) and tokens[-2] not in ("::", "struct", "class"):
                tokens = tokens[:-1]  # the parameter's name
            if tokens:
                types.append(" ".join(tokens))
            cur = ""
        else:
            cur += c
    return tuple(t for t in types if t != "void")


def definitions(text):
    """(namespace, name, parameter types, body) of each function defined at namespace scope."""
    found = []

    def scan(start, end, namespace):
        i, statement_start = start, start
        while i < end:
            c = text[i]
            if c == ";":
                statement_start = i + 1
            elif c == "(":
                i = matching(text, i, "(", ")")
                continue
            elif c == "{":
                head = text[statement_start:i]
                close = matching(text, i, "{", "}")
                ns = re.search(r"\bnamespace\s+([\w:]*)\s*$", head)
                if ns:
                    scan(i + 1, close - 1, namespace + ([ns.group(1)] if ns.group(1) else ["(anonymous)"]))
                elif re.search(r"\b(class|struct|union|enum)\b", head) or "=" in head.split("(")[0]:
                    pass  # a type's members, or an initialiser
                else:
                    m = re.search(r"(~?[A-Za-z_]\w*)\s*\(", head)
                    paren = head.find("(", m.start()) if m else -1
                    if m and m.group(1) not in ("if", "for", "while", "switch", "return", "decltype", "sizeof"):
                        params = head[paren + 1:matching(head, paren, "(", ")") - 1]
                        found.append(("::".join(namespace), m.group(1), parameter_types(params),
                                      " ".join(text[i:close].split())))
                i = close
                statement_start = i
                continue
            elif c == "}":
                statement_start = i + 1
            i += 1

    scan(0, len(text), [])
    return found


def main(root, folders):
    seen = {}  # (namespace, name, types) -> {body: [headers]}
    for folder in folders or ["."]:
        for dirpath, dirnames, files in os.walk(os.path.join(root, folder)):
            dirnames[:] = [d for d in dirnames if not d.startswith((".", "build"))]
            for f in files:
                if not f.endswith((".h", ".cuh")):
                    continue
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8", errors="replace") as h:
                    text = without_preprocessor(strip_comments_and_strings(h.read()))
                for namespace, name, types, body in definitions(text):
                    if namespace.split("::")[0] != "tandem" or "(anonymous)" in namespace:
                        continue
                    key = (namespace, name, types)
                    seen.setdefault(key, {}).setdefault(body, []).append(os.path.relpath(path, root))
    clashes = 0
    for (namespace, name, types), bodies in sorted(seen.items()):
        headers = sorted({h for hs in bodies.values() for h in hs})
        if len(bodies) > 1 and len(headers) > 1:
            clashes += 1
            print(f"{namespace}::{name}({', '.join(types)}): {len(bodies)} different bodies in {', '.join(headers)}")
    count = sum(len(b) for b in seen.values())
    print(f"{count} function definitions in headers of namespace tandem; {clashes} defined differently in two headers")
    return 1 if clashes else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
