"""tandem.Error and the status check every C call goes through."""
import enum

from ._lib import lib


class Code(enum.IntEnum):
    """The kinds of error (TandemCode in tandem.h)."""
    OK = 0
    INVALID_ARGUMENT = 1
    NOT_FOUND = 2
    FAILED_PRECONDITION = 3
    RESOURCE_EXHAUSTED = 4
    UNAVAILABLE = 5
    UNIMPLEMENTED = 6
    INTERNAL = 7
    BUSY = 8
    INVALID_MODEL = 9
    IO_ERROR = 10


class Error(RuntimeError):
    """An error reported by the Tandem library.

    Attributes:
        code: the kind of error, a :class:`Code` (an ``int``, TandemCode).
        message: the library's message, e.g. ``"[run] unknown input 'x2'"``.
    """

    def __init__(self, code, message):
        try:
            code = Code(code)
        except ValueError:
            pass
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self):
        name = self.code.name if isinstance(self.code, Code) else str(self.code)
        return f"{self.message} ({name})"

    def __repr__(self):
        return f"tandem.Error({int(self.code)}, {self.message!r})"


def check(status):
    """Raises :class:`Error` for a non-NULL TandemStatus*, releasing it either way."""
    if status is None or status == 0:
        return
    try:
        code = lib.tandem_status_code(status)
        raw = lib.tandem_status_message(status)
        message = raw.decode("utf-8", "replace") if raw else ""
    finally:
        lib.tandem_status_release(status)
    raise Error(code, message)
