"""Status (how a guest ended) and Completed (what run() returns)."""
from __future__ import annotations

import os
import signal
from typing import Any, Optional, Tuple

from . import _core
from ._errors import Error, GuestError, StartFailed, program_of

# The outcomes whose code is the signal that ended the guest.
_BY_SIGNAL = ("signaled", "timed_out", "limit")


class Status:
    """How a guest ended, as the helper reported it (read-only)."""

    __slots__ = ("_outcome", "_code", "_stage", "_limit", "_reason",
                 "_usage", "_cgroup", "_reached", "_exit_code")

    def __init__(self, guest: _core.Guest) -> None:
        """The end of an ended guest, read from its handle (with its
        connection's lock held)."""
        self._outcome = _core.outcome_name(guest.outcome()) or "unknown"
        self._code = guest.code()
        self._stage = _core.stage_name(guest.stage())
        self._limit = _core.limit_name(guest.limit())
        self._reason = guest.reason()
        self._usage: Tuple[int, int, int, int] = guest.usage()
        self._cgroup: Optional[Tuple[int, int]] = guest.cgroup_usage()
        reached = guest.limits_reached()
        self._reached = tuple(_core.limit_name(i) or "" for i in
                              range(_core.LIMIT_COUNT) if reached & (1 << i))
        self._exit_code = guest.exit_code()

    @property
    def outcome(self) -> str:
        """How the guest ended: 'exited', 'signaled', 'timed_out', 'limit'
        or 'failed' (never started)."""
        return self._outcome

    @property
    def code(self) -> Optional[int]:
        """The exit code when outcome is 'exited', else None."""
        return self._code if self._outcome == "exited" else None

    @property
    def signal(self) -> Optional[int]:
        """The signal that ended it for 'signaled', 'timed_out' (SIGKILL)
        and 'limit', else None."""
        return self._code if self._outcome in _BY_SIGNAL else None

    @property
    def limit(self) -> Optional[str]:
        """For 'limit': which one ended it: 'cpu' or 'fsize' (their rlimit's
        signal), 'memory' (its cgroup's OOM kill, of all of it), else
        None."""
        return self._limit if self._outcome == "limit" else None

    @property
    def limits_reached(self) -> Tuple[str, ...]:
        """The limits the guest reached and was not ended by: ('pids',)
        when a fork of it failed at its pids limit; () when none, or
        without a cgroup."""
        return self._reached

    @property
    def stage(self) -> Optional[str]:
        """For 'failed': the stage that failed ('policy', 'credentials',
        'confinement', 'exec'), else None."""
        return self._stage if self._outcome == "failed" else None

    @property
    def errno(self) -> Optional[int]:
        """For 'failed': the errno of the failed stage, else None."""
        return self._code if self._outcome == "failed" else None

    @property
    def reason(self) -> Optional[str]:
        """For 'failed': the helper's one-line reason, what went wrong at
        that stage (it names only the caller's own request and rule, e.g. a
        path), else None."""
        return self._reason if self._outcome == "failed" else None

    @property
    def wall(self) -> float:
        """Wall-clock seconds it ran."""
        return self._usage[0] / 1e6

    @property
    def user(self) -> float:
        """User CPU seconds."""
        return self._usage[1] / 1e6

    @property
    def sys(self) -> float:
        """System CPU seconds."""
        return self._usage[2] / 1e6

    @property
    def max_rss(self) -> int:
        """Peak resident set, KiB, of the largest process it waited for."""
        return self._usage[3]

    @property
    def cgroup_cpu(self) -> Optional[float]:
        """CPU seconds, user and system, of the whole guest, every process
        it started (those never waited for too), as its cgroup counted
        them; None when it ran without a cgroup (its notes say why)."""
        return None if self._cgroup is None else self._cgroup[0] / 1e6

    @property
    def memory_peak(self) -> Optional[int]:
        """The most the whole guest held at once, in bytes, its /tmp and
        /dev/shm included (its cgroup's memory.peak); None without a
        cgroup or where the kernel does not count it (before Linux
        5.19)."""
        return self._cgroup[1] if self._cgroup and self._cgroup[1] else None

    @property
    def returncode(self) -> int:
        """subprocess's returncode for this end, as Popen.returncode would
        be for the same process: the exit code for 'exited'; -N for
        'signaled', 'timed_out' and 'limit', N the signal that ended the
        guest (the helper ends a guest at its timeout with SIGKILL: -9; a
        limit ends it with its own signal, such as SIGXCPU, or SIGKILL);
        for 'failed' (never started) exit_code: 127 not found, 126 not
        executable, 125 any other failure."""
        if self._outcome == "exited":
            return self._code
        if self._outcome in _BY_SIGNAL:
            return -self._code
        return self._exit_code

    @property
    def exit_code(self) -> int:
        """The isospawn command's exit code for this end (env(1)'s and
        timeout(1)'s convention, not subprocess's): the guest's code;
        128+N when killed by signal N; 124 timed out; 127 not found; 126
        not executable; 125 any other failure."""
        return self._exit_code

    def __repr__(self) -> str:
        usage = "wall=%.6f, user=%.6f, sys=%.6f" % (self.wall, self.user,
                                                     self.sys)
        name = self._outcome
        if name == "exited":
            return "Status(outcome='%s', code=%d, %s, max_rss=%d)" % (
                name, self._code, usage, self.max_rss)
        if name == "limit":
            return "Status(outcome='%s', limit='%s', signal=%d, %s)" % (
                name, self._limit or "unknown", self._code, usage)
        if name in _BY_SIGNAL:
            return "Status(outcome='%s', signal=%d, %s)" % (name, self._code,
                                                           usage)
        if name == "failed":
            return ("Status(outcome='%s', stage='%s', errno=%d (%s), "
                    "reason=%r)" % (name, self._stage, self._code,
                                    os.strerror(self._code),
                                    self._reason or ""))
        return "Status(outcome='%s')" % name


class Completed:
    """What run() returns: a guest that has ended, with its output (as
    subprocess.CompletedProcess).

    args        the args given to run().
    returncode  as subprocess's: the guest's exit code; -N when a signal N
                ended it (-9 at its timeout: see Status.returncode); 127
                not found, 126 not executable, 125 any other failure to
                start (status.outcome 'failed').
    stdout      its standard output (bytes) with stdout=PIPE or
                capture_output, else None.
    stderr      its standard error (bytes) likewise, else None.
    status      the Status the helper reported: how it ended, in full.
    """

    def __init__(self, args: Any, status: Status, stdout: Optional[bytes],
                 stderr: Optional[bytes]) -> None:
        self.args = args
        self.returncode = status.returncode
        self.stdout = stdout
        self.stderr = stderr
        self.status = status

    def __repr__(self) -> str:
        return "Completed(args=%r, returncode=%d, stdout=%s, stderr=%s, " \
            "status=%r)" % (self.args, self.returncode,
                            "None" if self.stdout is None else "...",
                            "None" if self.stderr is None else "...",
                            self.status)

    def check_returncode(self) -> None:
        """Raise StartFailed if the guest never started, GuestError (a
        subprocess.CalledProcessError) if returncode is any other non-zero
        value; both with .completed."""
        if self.returncode == 0:
            return
        st = self.status
        error: Error
        if st.outcome == "failed":
            message = os.strerror(st.errno or 0)
            reason = st.reason
            if reason is None:
                what = "%s failed: %s" % (st.stage, message)
            elif reason.endswith(message):
                what = "%s failed: %s" % (st.stage, reason)
            else:
                what = "%s failed: %s: %s" % (st.stage, reason, message)
            error = StartFailed(self._message(what), errno=st.errno or None,
                                stage=st.stage)
        else:
            if st.outcome == "exited":
                what = "exited with code %d" % self.returncode
            elif st.outcome == "timed_out":
                what = "was killed by %s at its timeout" % _signame(st.signal)
            elif st.outcome == "limit":
                what = "was killed by %s at its %s limit" % (
                    _signame(st.signal), st.limit or "resource")
            else:
                what = "was killed by %s" % _signame(st.signal)
            error = GuestError(self._message(what), self.returncode,
                               self.args, self.stdout, self.stderr)
        error.completed = self
        raise error

    def _message(self, what: str) -> str:
        return "guest %r %s (returncode %d)" % (program_of(self.args), what,
                                                self.returncode)


def _signame(sig: Optional[int]) -> str:
    try:
        return signal.Signals(sig or 0).name
    except ValueError:
        return "signal %s" % sig
