"""Scratch directories for the benchmark scripts: exported models, inputs and outputs that
no one reads after the run. Each is removed, with all it holds, when the process that made
it exits (also on sys.exit or an exception), so repeated runs do not fill /tmp (one
cpu_bench.py run leaves ~170 MB of models)."""
import atexit
import shutil
import tempfile


def scratch_dir(prefix):
    """A new directory under the system's temporary directory, named prefix + random, that
    is deleted when this process exits."""
    path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path
