"""What the Python module's test scripts share (tests/python/test_python_api.py,
test_dlpack.py): one PASS/FAIL line per check, groups of checks that survive an
unexpected exception, and error and closeness checks."""
import traceback

import numpy as np

import tandem

RESULTS = []


def check(name, ok, detail=""):
    """Records one check and prints its line."""
    RESULTS.append((name, bool(ok)))
    print(f"{'PASS' if ok else 'FAIL'}  {name}" + (f"  -- {detail}" if detail else ""),
          flush=True)
    return bool(ok)


def section(fn):
    """Runs a group of checks; an unexpected exception fails the group, not the script."""
    def run(*args):
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - report and go on with the other groups
            traceback.print_exc()
            check(f"{fn.__name__} completed without an unexpected exception", False)
    run.__name__ = fn.__name__
    return run


def rel_diff(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-12)))


def expect_error(name, fn, code=None, substrings=(), exc_type=None, any_of=None):
    """Checks that fn() raises tandem.Error (or `exc_type`) whose message names each of
    `substrings` (and at least one of `any_of` when given); returns the exception."""
    exc_type = exc_type or tandem.Error
    try:
        fn()
    except exc_type as e:
        msg = str(e)
        ok = all(s in msg for s in substrings)
        if any_of:
            ok &= any(s in msg for s in any_of)
        if code is not None and isinstance(e, tandem.Error):
            ok &= e.code == code
        detail = f"{type(e).__name__}: {msg}"
        if isinstance(e, tandem.Error):
            ok &= isinstance(e, RuntimeError) and isinstance(e.code, int)
            ok &= e.code != 0 and bool(e.message)
        check(name, ok, detail)
        return e
    except Exception as e:  # noqa: BLE001
        check(name, False, f"raised {type(e).__name__} instead: {e}")
        return e
    check(name, False, "no exception")
    return None


def summary():
    """Prints the tally and the failed checks; returns the exit status (0: all passed)."""
    failed = [name for name, ok in RESULTS if not ok]
    print(f"\n{len(RESULTS) - len(failed)}/{len(RESULTS)} checks passed")
    if failed:
        print("FAILED:\n  " + "\n  ".join(failed))
        print("FAIL")
        return 1
    print("PASS")
    return 0
