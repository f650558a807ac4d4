"""tandem.TrainingSession: training a model from Python."""
import ctypes
import os
import weakref

import numpy as np

from ._dlpack import native_stream
from ._env import get_env
from ._errors import check
from ._owned import Owned
from ._lib import lib
from ._tensor import Wrapped, take_outputs, wrap_one


def _option_text(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _training_options(settings):
    handle = ctypes.c_void_p()
    check(lib.tandem_training_options_create(ctypes.byref(handle)))
    opts = handle.value
    try:
        for key, value in settings:
            if value is None:
                continue
            values = value if isinstance(value, (list, tuple)) else [value]
            for v in values:
                check(lib.tandem_training_options_set(opts, key.encode(),
                                                      _option_text(v).encode()))
    except BaseException:
        lib.tandem_training_options_release(opts)
        raise
    return opts


class TrainingSession(Owned):
    """A model being trained: its parameters and optimizer state live in the library.

    ``TrainingSession(path, loss='mse', optimizer='adam', lr=1e-3, **options)``

    Args:
        path: the ONNX model (an inference model, e.g. from torch.onnx.export).
        loss: ``"mse"``, ``"l1"``, ``"cross_entropy"``, ``"nll"`` (log-probabilities in,
            int64 class labels like cross_entropy) or ``"bce_with_logits"``.
        optimizer: ``"sgd"``, ``"momentum"``, ``"adam"`` or ``"adamw"``.
        lr: the base learning rate.
        **options: any other setting of tandem_training_options_set, spelled like
            ``tandem train``'s flags with underscores: reduction, prediction, momentum,
            nesterov, beta1, beta2, epsilon, weight_decay, clip_norm, schedule, step_size,
            gamma, total_steps, min_lr, warmup_steps, freeze (a name, ``"prefix*"`` or a
            list of them), threads, device (``"cpu"``, ``"cuda"``, ``"auto"``),
            distributed (``"mpi"``: in a process ``mpirun -n K`` started, train one model
            data-parallel with the other ranks; each steps on its own batch, see
            docs/DISTRIBUTED.md and :attr:`rank`). Booleans become 0/1; None values are
            skipped.

    Raises :class:`tandem.Error` for an unknown option or malformed value
    (INVALID_ARGUMENT), a missing model (NOT_FOUND), or a model it cannot train.

    Not thread-safe: use it from one thread at a time (a concurrent call raises
    tandem.Error with code BUSY). Use it as a context manager or call :meth:`close` to
    free it early.
    """

    def __init__(self, path, loss="mse", optimizer="adam", lr=1e-3, **options):
        self._env = get_env()
        self.path = os.fspath(path)
        settings = [("loss", loss), ("optimizer", optimizer), ("lr", lr)]
        settings += list(options.items())
        opts = _training_options(settings)
        handle = ctypes.c_void_p()
        try:
            check(lib.tandem_training_session_create(self._env.handle, os.fsencode(self.path),
                                                     opts, ctypes.byref(handle)))
        finally:
            lib.tandem_training_options_release(opts)
        self._handle = handle.value
        self._finalizer = weakref.finalize(self, _release_training, self._handle, self._env)
        self._output_count = None
        self._device_stream = native_stream(lib.tandem_training_session_device_stream, self._handle)
        h = self._handle
        count = ctypes.c_size_t()
        check(lib.tandem_training_session_input_count(h, ctypes.byref(count)))
        names = []
        for i in range(count.value):
            name = ctypes.c_char_p()
            check(lib.tandem_training_session_input_name(h, i, ctypes.byref(name)))
            names.append((name.value or b"").decode())
        self._input_names = names

    # -- data -----------------------------------------------------------------------------

    @property
    def input_names(self):
        """The model's data inputs (what a batch feeds), in model order."""
        return list(self._input_names)

    @property
    def device_stream(self):
        """The GPU stream this session trains on (a cudaStream_t as an int), or None on the
        CPU: CUDA tensors fed to it are ordered before it (DLPack)."""
        self._h()
        return self._device_stream

    def _feeds(self, feeds):
        if isinstance(feeds, dict):
            return feeds
        if len(self._input_names) != 1:
            raise TypeError(f"the model has {len(self._input_names)} data inputs "
                            f"{self._input_names}: pass a dict {{name: array}}")
        return {self._input_names[0]: feeds}

    # -- steps ----------------------------------------------------------------------------

    def train_step(self, feeds, target):
        """One optimizer step on a batch.

        Args:
            feeds: ``{input name: array}``, or the array itself for a single-input model;
                arrays or host tensors with ``__dlpack__`` (e.g. PyTorch's), unconverted.
            target: the targets (float32 for mse/l1/bce_with_logits, int64 class indices
                for cross_entropy); no dtype conversion is made.

        Returns:
            The batch loss before the update (float).
        """
        h = self._h()
        loss = ctypes.c_double()
        t, t_arr = wrap_one(target, "target", self.device_stream)
        try:
            with Wrapped(self._feeds(feeds), device_stream=self.device_stream) as w:
                check(lib.tandem_training_session_train_step(h, w.names, w.tensors, w.count, t,
                                                             ctypes.byref(loss)))
        finally:
            lib.tandem_tensor_release(t)
            del t_arr
        return float(loss.value)

    def eval_step(self, feeds, target):
        """Loss (mean over samples) and accuracy of the current weights on a batch, in
        inference mode, without an update.

        Returns:
            ``(loss, accuracy)``; accuracy is None unless the loss is a classification loss.
        """
        h = self._h()
        loss = ctypes.c_double()
        acc = ctypes.c_double()
        t, t_arr = wrap_one(target, "target", self.device_stream)
        try:
            with Wrapped(self._feeds(feeds), device_stream=self.device_stream) as w:
                check(lib.tandem_training_session_eval_step(h, w.names, w.tensors, w.count, t,
                                                            ctypes.byref(loss),
                                                            ctypes.byref(acc)))
        finally:
            lib.tandem_tensor_release(t)
            del t_arr
        accuracy = None if acc.value < 0 else float(acc.value)
        return float(loss.value), accuracy

    @property
    def output_count(self):
        """The number of model outputs."""
        if self._output_count is None:
            count = ctypes.c_size_t()
            check(lib.tandem_training_session_output_count(self._h(), ctypes.byref(count)))
            self._output_count = count.value
        return self._output_count

    def predict(self, feeds, output="numpy"):
        """The model's outputs with the current weights (inference mode).

        Args:
            feeds: ``{input name: array}``, or the array itself for a single-input model.
            output: ``"numpy"`` or ``"dlpack"`` (as :meth:`tandem.Session.run`).

        Returns:
            A list, one per model output in model order, of new ndarrays or DLPackTensors.
        """
        n = self.output_count
        h = self._h()
        outs = (ctypes.c_void_p * max(n, 1))()
        with Wrapped(self._feeds(feeds), device_stream=self.device_stream) as w:
            check(lib.tandem_training_session_predict(h, w.names, w.tensors, w.count, n, outs))
        return take_outputs(outs[:n], output)

    # -- state ----------------------------------------------------------------------------

    @property
    def learning_rate(self):
        """The learning rate the next step uses (the schedule applied); setting it sets the
        base rate that the schedule, if any, scales."""
        lr = ctypes.c_double()
        check(lib.tandem_training_session_learning_rate(self._h(), ctypes.byref(lr)))
        return float(lr.value)

    @learning_rate.setter
    def learning_rate(self, value):
        check(lib.tandem_training_session_set_learning_rate(self._h(), float(value)))

    @property
    def rank(self):
        """(rank, size): this process's place in a data-parallel job; (0, 1) otherwise."""
        rank, size = ctypes.c_int(), ctypes.c_int()
        check(lib.tandem_training_session_rank(self._h(), ctypes.byref(rank), ctypes.byref(size)))
        return int(rank.value), int(size.value)

    @property
    def steps(self):
        """The number of optimizer steps taken so far (restored by load_checkpoint)."""
        steps = ctypes.c_int64()
        check(lib.tandem_training_session_steps(self._h(), ctypes.byref(steps)))
        return int(steps.value)

    def save_checkpoint(self, path):
        """Writes parameters, optimizer state and step count to `path`, atomically (the
        format of ``tandem train --checkpoint-dir``)."""
        check(lib.tandem_training_session_save_checkpoint(self._h(),
                                                          os.fsencode(os.fspath(path))))

    def load_checkpoint(self, path):
        """Restores a checkpoint written by :meth:`save_checkpoint` (or the CLI); every
        tensor's name, shape and type must match the model."""
        check(lib.tandem_training_session_load_checkpoint(self._h(),
                                                          os.fsencode(os.fspath(path))))

    def export(self, path):
        """Writes the trained model to `path` as a standard ONNX inference model."""
        check(lib.tandem_training_session_export(self._h(), os.fsencode(os.fspath(path))))

    # -- loop -----------------------------------------------------------------------------

    def fit(self, x, y, epochs=1, batch_size=32, shuffle=True, seed=0, callback=None,
            drop_last=False):
        """Trains on in-memory data.

        Args:
            x: the inputs, row i = sample i: an array for a single-input model, else a dict
                ``{input name: array}`` (all with the same number of rows).
            y: the targets, row i = sample i.
            epochs: passes over the data.
            batch_size: samples per step (the last batch of an epoch may be smaller unless
                `drop_last`); a value >= the sample count means full batch.
            shuffle: visit the samples in a new random order each epoch.
            seed: seed of the shuffling (numpy.random.default_rng).
            callback: called as ``callback(epoch, mean_loss)`` after each epoch (epoch
                counts from 0); returning False stops training.
            drop_last: skip an epoch's final, smaller batch.

        Returns:
            The per-epoch mean losses (each batch loss weighted by its sample count).
        """
        feeds = {k: np.asarray(v) for k, v in self._feeds(x).items()}
        y = np.asarray(y)
        n = y.shape[0] if y.ndim else 0
        for k, v in feeds.items():
            if v.ndim == 0 or v.shape[0] != n:
                raise ValueError(f"fit(): input '{k}' has {v.shape[0] if v.ndim else 0} rows, "
                                 f"the targets {n}")
        if batch_size <= 0:
            raise ValueError("fit(): batch_size must be positive")
        if n == 0:
            raise ValueError("fit(): no samples")
        rng = np.random.default_rng(seed)
        history = []
        for epoch in range(int(epochs)):
            order = rng.permutation(n) if shuffle else None
            total, seen = 0.0, 0
            for start in range(0, n, batch_size):
                stop = min(start + batch_size, n)
                if drop_last and stop - start < batch_size and seen:
                    break
                if order is None:
                    batch = {k: v[start:stop] for k, v in feeds.items()}
                    target = y[start:stop]
                else:
                    idx = order[start:stop]
                    batch = {k: v[idx] for k, v in feeds.items()}
                    target = y[idx]
                loss = self.train_step(batch, target)
                total += loss * (stop - start)
                seen += stop - start
            mean = total / seen
            history.append(mean)
            if callback is not None and callback(epoch, mean) is False:
                break
        return history

    def __repr__(self):
        state = "closed" if self.closed else self.path
        return f"tandem.TrainingSession({state})"


def _release_training(handle, env):
    del env  # kept alive until here
    lib.tandem_training_session_release(handle)
