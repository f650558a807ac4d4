"""Lifetime of objects that own a C handle (Session, TrainingSession)."""


class Owned:
    """Base for classes holding ``self._handle`` freed by ``self._finalizer``
    (a weakref.finalize): close(), closed, context-manager use, and _h() which refuses
    a closed object."""

    _handle = None

    def close(self):
        """Frees the handle now (later calls raise ValueError). Idempotent. Must not be
        called while another thread is using the object."""
        self._finalizer()
        self._handle = None

    @property
    def closed(self):
        """True once :meth:`close` has been called."""
        return self._handle is None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _h(self):
        h = self._handle
        if h is None:
            raise ValueError(f"tandem.{type(self).__name__} is closed")
        return h
