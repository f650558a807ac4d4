"""The ``tandem`` console script of the wheel: runs the CLI binary installed in the package
(``tandem/bin/tandem``, cmake/wheel.cmake) with this process's arguments."""
import os
import sys

_BINARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "tandem")


def main():
    if not os.access(_BINARY, os.X_OK):
        sys.exit(f"tandem: the CLI is not part of this installation ({_BINARY} is missing); "
                 "it comes with the wheel (pip install) or build/tandem in a source tree")
    os.execv(_BINARY, [_BINARY] + sys.argv[1:])


if __name__ == "__main__":
    main()
