"""isospawn's exceptions, and the one place a library error becomes one."""
from __future__ import annotations

import errno as _errno
from typing import TYPE_CHECKING, Optional

from . import _core

if TYPE_CHECKING:
    from ._status import Completed


class Error(Exception):
    """Base of isospawn's errors. .errno is the errno value (or None),
    .stage the failed stage for StartFailed (else None), .completed the
    Completed for errors raised by run(check=True) (else None)."""

    errno: Optional[int] = None
    stage: Optional[str] = None
    completed: Optional[Completed] = None

    def __init__(self, message: str, *, errno: Optional[int] = None,
                 stage: Optional[str] = None) -> None:
        super().__init__(message)
        self.errno = errno
        self.stage = stage


class Refused(Error):
    """The helper or the policy refused: str() is the helper's reason and
    names what was refused (an override, a limit, a path, the caller).
    Nothing was started. .errno: EACCES (policy), EINVAL or E2BIG
    (malformed or too large), EAGAIN (no free uid in the pool), ENOSYS (the
    kernel lacks a mechanism the policy requires); EPERM from build_env()."""


class StartFailed(Error):
    """The guest could not be started: .stage ('policy', 'credentials',
    'confinement', 'exec') and .errno say where and why, and str() gives
    the helper's reason (also Status.reason). Raised by spawn() and run()
    for a bare program name found nowhere in GUEST_PATH, and by
    run(check=True) when status.outcome is 'failed' (with .completed)."""


class GuestError(Error):
    """run(check=True): the guest ended with a non-zero returncode.
    .completed is the Completed (output included)."""


# What the helper or the policy refuses, as iso_open() and iso_spawn()
# report it: the rest is an error of the connection.
_REFUSALS = frozenset((_errno.EACCES, _errno.EINVAL, _errno.E2BIG,
                       _errno.EAGAIN, _errno.ENOSYS))


def error_of(e: _core.Error) -> Error:
    """The public exception for a failed library call."""
    cls = Refused if e.errno in _REFUSALS else Error
    return cls(e.strerror, errno=e.errno or None)
