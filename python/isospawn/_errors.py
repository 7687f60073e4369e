"""isospawn's exceptions, and the one place a library error becomes one."""
from __future__ import annotations

import errno as _errno
import subprocess
from typing import TYPE_CHECKING, Any, Optional

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
        # Exception's, by name: in GuestError the next class is
        # CalledProcessError, whose __init__ takes other arguments.
        Exception.__init__(self, message)
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
    run(check=True) when status.outcome is 'failed' (with .completed, whose
    returncode is 127 not found, 126 not executable, 125 any other).

    Not a subprocess.CalledProcessError: subprocess raises OSError, never
    CalledProcessError, for a program it cannot start, and spawn() raises
    this before there is any returncode; `except CalledProcessError`
    catches guests that ran and failed, as it does with subprocess."""


def program_of(args: Any) -> Any:
    """What names the program in an args argument: args[0], or args."""
    one = isinstance(args, (str, bytes)) or not hasattr(args, "__getitem__")
    return args if one else args[0]


class GuestError(Error, subprocess.CalledProcessError):
    """run(check=True) or Completed.check_returncode(): the guest ran and
    ended with a non-zero returncode. A subprocess.CalledProcessError, with
    its attributes: .returncode (-N: ended by signal N), .cmd (the args
    given), .output (also .stdout) and .stderr (bytes when captured, else
    None); and .completed, the Completed (.completed.status says how it
    ended: 'exited', 'signaled', 'timed_out' or 'limit'). str() says it in
    words ("guest '/usr/bin/python3' exited with code 3 (returncode 3)")."""

    def __init__(self, message: str, returncode: int = 1, cmd: Any = None,
                 output: Optional[bytes] = None,
                 stderr: Optional[bytes] = None) -> None:
        Error.__init__(self, message)
        subprocess.CalledProcessError.__init__(self, returncode, cmd, output,
                                               stderr)

    def __str__(self) -> str:
        return Exception.__str__(self)


class TimeoutExpired(Error, subprocess.TimeoutExpired):
    """Guest.wait(timeout) or wait_async(timeout): the guest had not ended
    when the timeout expired, and still runs (as with Popen.wait). A
    subprocess.TimeoutExpired, with its attributes: .cmd (the guest's
    args), .timeout (the seconds waited); .output and .stderr are None.
    Not the guest's own timeout: a guest the helper ended at its deadline
    has ended (status.outcome 'timed_out')."""

    def __init__(self, cmd: Any, timeout: float) -> None:
        subprocess.TimeoutExpired.__init__(self, cmd, timeout)

    def __str__(self) -> str:
        return "guest %r still running after %s seconds" % (
            program_of(self.cmd), self.timeout)


# What the helper or the policy refuses, as iso_open() and iso_spawn()
# report it: the rest is an error of the connection.
_REFUSALS = frozenset((_errno.EACCES, _errno.EINVAL, _errno.E2BIG,
                       _errno.EAGAIN, _errno.ENOSYS))


def error_of(e: _core.Error) -> Error:
    """The public exception for a failed library call."""
    cls = Refused if e.errno in _REFUSALS else Error
    return cls(e.strerror, errno=e.errno or None)
