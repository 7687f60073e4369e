"""Start untrusted guest programs through the isospawn helper.

A guest gets an environment built from an allow-list (FORWARDED_NAMES from
this process, PATH=GUEST_PATH, validated overrides), a pool uid of its
own, and the confinement the administrator's policy sets (seccomp,
Landlock, resource limits, a timeout, optionally no network). The setuid
helper enforces all of it; this package is a client of libisospawn,
through a thin C core (isospawn._core) that wraps its calls one to one.

    import isospawn
    done = isospawn.run(["python3", "-c", "print(42)"],
                        capture_output=True, timeout=10)
    done.stdout                  # b'42\\n'

    with isospawn.Connection() as conn:          # one helper, many guests
        g = conn.spawn(["/usr/bin/python3", "/srv/jobs/job.py"],
                       read=["/srv/jobs"], channel=True,
                       env={"JOB": "7"}, limits={"as": "1G"})
        g.send(b"work"); reply = g.recv(timeout=5)
        returncode = g.wait()    # or: await g.wait_async()
        g.status                 # Status(outcome='exited', code=0, ...)

subprocess's conventions. Guest is used as Popen is (poll(), wait(timeout),
send_signal(), terminate(), kill(), returncode, pid, args) and Completed as
CompletedProcess is; returncode is subprocess's: the exit code, -N when
signal N ended the guest, including -9 (SIGKILL) when the helper ended it
at its timeout and the limit's signal when a resource limit did; 127, 126
or 125 for a guest that never started (not found, not executable, any
other reason). Status, reachable as .status, says how it ended in full
(outcome 'exited', 'signaled', 'timed_out', 'limit' or 'failed', usage,
the helper's reason). The guest's timeout is the helper's to enforce: its
expiry raises nothing, the guest has ended (returncode -9, outcome
'timed_out'); TimeoutExpired is for waits of the caller's own that expire
while the guest still runs. timeout=None is the policy's default and
timeout=NO_TIMEOUT (math.inf, an infinite number of seconds, which wait()
and recv() read as "for ever" too) asks for none, which only a rule that
allows it grants; 0 is a ValueError, neither "none" nor "no time at all".
Guest.pid is the pid of the guest's reaper as this process sees it (pid 1
of the guest's PID namespace, which forwards signals to the guest): the
guest itself sees its own pid as 2, which means nothing here.

Threads. Everything here may be used from several threads, and every
blocking call releases the GIL. What is shared: a Connection is one
helper and one socket, shared by all its guests; each call on it or on
one of its guests holds the connection's lock for one non-blocking
library call or one spawn round trip (a few ms), never while waiting:
wait(), recv(), send() (several threads to one guest too) and run()'s I/O
wait outside the lock, so threads waiting on guests of one connection do
not hold each other up, but spawns on one connection are serialized.
run() uses one default Connection shared by the whole process; open a
Connection per thread for spawns that never wait for each other. Guest,
Status and Completed objects may be used from any thread.
isospawn.guest's Channel is a plain socket: one thread at a time per
direction.

Processes. A Connection belongs to the process that opened it: in a
forked child it raises Error and is left alone (the parent's guests are
not touched); run() opens a new default connection there.

Errors. Error (with .errno) is the base; Refused: the helper or the
policy refused, str() is its reason and names what; StartFailed: the
guest could not be started (.stage, .errno; not a CalledProcessError, as
subprocess raises OSError for a program it cannot start); GuestError, also
a subprocess.CalledProcessError (.returncode, .cmd, .output, .stderr):
run(check=True) saw a non-zero returncode (.completed); TimeoutExpired,
also a subprocess.TimeoutExpired (.cmd, .timeout): wait(timeout) or
wait_async(timeout) expired. Bad arguments raise ValueError or TypeError
before anything is sent.

In a guest, isospawn.guest.channel() is the other end of the channel: a
Channel (isospawn.guest.Channel, below), or None outside a guest.
"""
from . import guest
from ._conn import Connection, Guest, run
from ._core import FORWARDED_NAMES, GUEST_PATH, MESSAGE_MAX
from ._core import VERSION as __version__
from ._errors import Error, GuestError, Refused, StartFailed, TimeoutExpired
from ._spec import DEVNULL, LIMITS, NO_TIMEOUT, PIPE, STDOUT, build_env
from ._status import Completed, Status
# The guest's end of the channel, documented here; its home, and the name
# guests use, is isospawn.guest.Channel.
from .guest import Channel

__all__ = [
    "Channel", "Completed", "Connection", "DEVNULL", "Error",
    "FORWARDED_NAMES", "GUEST_PATH", "Guest", "GuestError", "LIMITS",
    "MESSAGE_MAX", "NO_TIMEOUT", "PIPE", "Refused", "STDOUT", "StartFailed",
    "Status", "TimeoutExpired", "build_env", "guest", "run",
]

# Shown as isospawn.X, where they are documented and imported from.
for _public in (Completed, Connection, Error, Guest, GuestError, Refused,
                StartFailed, Status, TimeoutExpired, build_env, run):
    _public.__module__ = __name__
del _public
