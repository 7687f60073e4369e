"""Connection and Guest: one helper shared by threads and asyncio loops.

The library's contract is that a connection and everything made from it
are used by one thread at a time; Python threads share objects freely, so
every Connection has a lock. What the code below relies on:

 - Every _core call on a connection, or on one of its guests, is made with
   the connection's lock held. It is held for one call that does not block
   (wait(0), recv(0), kill(), send() on a channel made non-blocking at
   spawn, which fails with EAGAIN when another thread took the room poll()
   saw) or for one spawn round trip. Waiting happens outside it, in poll()
   on a duplicate of the connection's socket or of a guest's channel,
   which nobody closes while a waiter may poll it.
 - A thread that consumed messages from the socket (a spawn, or a wait(0)
   while the socket was readable) may have collected another guest's end:
   it then wakes every registered waker, so that nobody sleeps in poll() on
   an event already read.
 - Once closed, no call is made on the connection or its guests; closing
   shuts the socket down, which wakes every poll() on its duplicates.
 - In a process forked from the one that opened the connection, nothing
   is sent and nothing is closed: the socket is shared with the parent,
   and a kill or a shutdown would act on the parent's guests.
"""
from __future__ import annotations

import errno
import fcntl
import math
import operator
import os
import select
import signal
import socket
import threading
import time
from typing import (TYPE_CHECKING, Any, Coroutine, Dict, Iterable, List,
                    Mapping, Optional, Tuple, Union)

from . import _core
from ._errors import Error, Refused, TimeoutExpired, error_of
from ._spec import (PIPE, Args, ChannelKind, Env, File, Request,
                    StrOrBytesPath, deadline, is_pipe, ms_until, seconds,
                    stdio_guard, wait_ms)
from ._status import Completed, Status

if TYPE_CHECKING:
    import asyncio  # imported when first used: guests import this package


def _dup(fd: int) -> int:
    """A duplicate of fd numbered above 2 (see stdio_guard)."""
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)


def _readable(fd: int) -> bool:
    p = select.poll()
    p.register(fd, select.POLLIN)
    return bool(p.poll(0))


# This process's pid, without a system call each time it is asked.
_pid = os.getpid()


class _Waker:
    """A pipe another thread writes to wake the one that polls it."""

    def __init__(self) -> None:
        stdio_guard()  # never on 0, 1 or 2 (see stdio_guard)
        self.fd, self._w = os.pipe()
        os.set_blocking(self.fd, False)
        os.set_blocking(self._w, False)

    def wake(self) -> None:
        try:
            os.write(self._w, b"!")
        except BlockingIOError:
            pass  # full: it is readable already

    def drain(self) -> None:
        try:
            while os.read(self.fd, 4096):
                pass
        except BlockingIOError:
            pass

    def __del__(self) -> None:
        for fd in (getattr(self, "fd", -1), getattr(self, "_w", -1)):
            if fd >= 0:
                os.close(fd)


_local = threading.local()


def _thread_waker() -> _Waker:
    """This thread's waker, made once."""
    waker: Optional[_Waker] = getattr(_local, "waker", None)
    if waker is None:
        waker = _local.waker = _Waker()
    return waker


def _after_fork() -> None:
    """In a forked child: its own pid, and its own waker when it waits (the
    copy it inherited is shared with the parent)."""
    global _pid
    _pid = os.getpid()
    _local.waker = None


os.register_at_fork(after_in_child=_after_fork)


class Connection:
    """One isospawn helper, started now (the setuid isospawn-helper, or the
    one ISOSPAWN_HELPER names), serving any number of guests until close().
    The helper checks the policy and this caller once: a caller no rule
    admits gets Refused here. A context manager: leaving the with block
    closes it, which kills the guests still running.

    A Connection may be shared by threads: every call on it or on its
    guests holds the connection's lock only for one non-blocking library
    call or one spawn round trip; waits happen outside the lock with the
    GIL released. It cannot be used in a forked child (open a new one
    there); the child leaves the parent's guests alone.

    wait_slot: where this caller holds as many connections as its rule
    allows ('guests' + 1, each a helper), wait up to that many seconds
    (math.inf: as long as it takes) for one to close instead of raising
    Refused (errno EAGAIN) at once. The thread blocks, the helper sleeps.
    """

    def __init__(self, *, wait_slot: Optional[float] = None) -> None:
        try:
            core = _core.Conn(wait_ms(wait_slot))
        except _core.Error as e:
            raise error_of(e) from None
        self._core: Optional[_core.Conn] = core
        self._fd = _dup(core.fd())
        self._landlock_abi = core.landlock_abi()
        self._owner = _pid
        self._lock = threading.RLock()
        self._broken = False
        self._wakers: List[_Waker] = []
        self._watchers: Dict[asyncio.AbstractEventLoop, _Watcher] = {}

    def __del__(self) -> None:
        if hasattr(self, "_fd"):
            os.close(self._fd)

    def __enter__(self) -> Connection:
        self._check()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        if self._core is None:
            return "<isospawn.Connection closed>"
        return "<isospawn.Connection fd=%d landlock_abi=%d>" % (
            self._fd, self._landlock_abi)

    @property
    def closed(self) -> bool:
        """True once close() was called."""
        return self._core is None

    @property
    def landlock_abi(self) -> int:
        """The Landlock ABI version the helper reported (0: none)."""
        return self._landlock_abi

    def close(self) -> None:
        """Kill every guest of this connection that is still running, stop
        its helper and release it. Waits of other threads on its guests
        raise Error. Calling it again does nothing."""
        with self._lock:
            core, self._core = self._core, None
            # The parent's, in a forked child: neither kill its guests nor
            # shut its socket down. The handle goes with its last Guest.
            if core is not None and self._owner == _pid:
                core.close()

    def fileno(self) -> int:
        """The connection's socket (a duplicate of iso_conn_fd(), the same
        for this Connection's life), for selectors: readable when the
        helper sent something, such as a guest's end; then call poll() on
        the guests you wait for. Only poll it: never read, write or close
        it."""
        self._check()
        return self._fd

    def spawn(self, args: Args, *, env: Optional[Env] = None,
              timeout: Optional[float] = None,
              limits: Optional[Mapping[str, Union[int, str]]] = None,
              network: Optional[str] = None,
              read: Iterable[StrOrBytesPath] = (),
              write: Iterable[StrOrBytesPath] = (),
              cwd: Optional[StrOrBytesPath] = None,
              workdir: Optional[StrOrBytesPath] = None, stdin: File = None,
              stdout: File = None, stderr: File = None,
              channel: ChannelKind = False, pass_fds: Iterable[int] = (),
              wait_slot: Optional[float] = None) -> Guest:
        """Start a guest and return at once. The helper checks the request
        against the policy first; a refusal raises Refused and starts
        nothing.

        args     the program and its arguments (str, bytes or path-like);
                 args[0] is an absolute path, a relative one with a '/', or
                 a bare name looked up in GUEST_PATH only (never the
                 caller's PATH); a bare name found nowhere raises
                 StartFailed (errno ENOENT).
        env      a mapping of overrides merged last into the guest's
                 environment, which is otherwise built from FORWARDED_NAMES
                 and GUEST_PATH (the helper validates them: a refused one
                 raises Refused).
        timeout  wall-clock seconds (float) after which the helper kills
                 the guest with SIGKILL (returncode -9, status.outcome
                 'timed_out'); None: the policy's default; NO_TIMEOUT
                 (math.inf): none at all, where the caller's rule allows
                 it (else Refused). 0 is a ValueError, not "none".
        limits   a mapping such as {'as': '1G', 'cpu': 10}: cpu (seconds),
                 as/fsize/stack, scratch/shm (the sizes of its /tmp and
                 /dev/shm) (bytes, an int or a str with a K/M/G/T suffix),
                 nofile/nproc (counts); for the whole guest, on its
                 cgroup: memory (bytes), pids (a count), cpus (CPUs, such
                 as 1.5 or '0.5'); 'unlimited' for no limit.
        network  'none' (loopback only), 'host', or None for the policy's
                 choice.
        read, write  directories or files of this process's to lend the
                 guest, read-only (or for reading and writing), as the
                 policy's grants allow: each is opened here, as this
                 process, and the guest finds it at the same absolute path
                 and reaches in it what this process would; what it writes
                 there is this process's.
        workdir  a directory lent for writing, where the guest starts.
        cwd      where the guest starts: a directory of its tree (a
                 relative one named as this process sees it, lent with
                 workdir, say); default its own /tmp.
        stdin, stdout, stderr  None (inherit this process's), a file object
                 or descriptor (a file, pipe, terminal or socket: a
                 connected socket may be a guest's stdin and stdout at
                 once), PIPE (then guest.stdin/stdout/stderr are
                 binary files), DEVNULL, or for stderr STDOUT. Of 0, 1 and
                 2, one this process has closed is opened on /dev/null
                 before the guest inherits it or a pipe is made, so that
                 no descriptor of isospawn's own can take its number and
                 reach a guest.
        channel  True (or 'messages'): a message channel (guest.send()/
                 recv(); in the guest, isospawn.guest.channel());
                 'stream': a byte stream, for protocols that frame their
                 own.
        pass_fds descriptors of this process's (3 and above, not a
                 directory) the guest gets at the same numbers, as with
                 subprocess; not fd 3 with a channel (the channel's).
        wait_slot seconds to wait, where this caller runs as many guests
                 as its rule allows (over all its connections), for one to
                 end, instead of Refused (errno EAGAIN) at once; math.inf:
                 as long as it takes. The helper sleeps meanwhile, but this
                 connection answers no other call until the spawn returns:
                 threads that share a Connection should not wait on it
                 (the module's run() waits on a connection of its own).

        Keep the Guest while the guest should run: a Guest that is garbage
        collected kills its guest, like closing the connection kills them
        all.
        """
        self._check()
        request = Request(args, env, timeout, limits, network, read, write,
                          [stdin, stdout, stderr], channel, cwd, workdir,
                          pass_fds, wait_slot)
        try:
            guest = self._spawn(args, request)
            pipes = request.take_pipes()
        finally:
            request.close()
        if pipes:
            guest.stdin, guest.stdout, guest.stderr = (
                None if fd < 0 else open(fd, mode)
                for fd, mode in zip(pipes, ("wb", "rb", "rb")))
        return guest

    def run(self, args: Args, *, env: Optional[Env] = None,
            timeout: Optional[float] = None,
            limits: Optional[Mapping[str, Union[int, str]]] = None,
            network: Optional[str] = None,
            read: Iterable[StrOrBytesPath] = (),
            write: Iterable[StrOrBytesPath] = (),
            cwd: Optional[StrOrBytesPath] = None,
            workdir: Optional[StrOrBytesPath] = None, stdin: File = None,
            stdout: File = None, stderr: File = None,
            capture_output: bool = False, input: Optional[bytes] = None,
            check: bool = False, pass_fds: Iterable[int] = (),
            wait_slot: Optional[float] = None) -> Completed:
        """Spawn a guest on this connection, feed it input, collect the
        output asked for (PIPE or capture_output) and wait for it, like
        subprocess.run. The arguments are spawn()'s; input (bytes) is
        written to its stdin. Returns a Completed, whose returncode is
        subprocess's (-N for signal N). timeout is the guest's wall-clock
        timeout, which the helper enforces: unlike subprocess.run, its
        expiry raises nothing, the guest has ended (returncode -9,
        status.outcome 'timed_out'). check=True raises GuestError (a
        subprocess.CalledProcessError) for a non-zero returncode, and
        StartFailed (not one) when the guest never started. On an exception
        (a signal handler's, such as KeyboardInterrupt) the guest is killed.
        """
        self._check()
        if capture_output:
            if stdout is not None or stderr is not None:
                raise ValueError("stdout and stderr may not be used with "
                                 "capture_output")
            stdout = stderr = PIPE
        data = b""
        if input is not None:
            if stdin is not None:
                raise ValueError("stdin and input may not both be used")
            data = memoryview(input).cast("B")
            stdin = PIPE
        request = Request(args, env, timeout, limits, network, read, write,
                          [stdin, stdout, stderr], False, cwd, workdir,
                          pass_fds, wait_slot)
        try:
            guest = self._spawn(args, request)
            pipes = request.take_pipes() or [-1, -1, -1]
        finally:
            request.close()
        try:
            out, err = _communicate(pipes, data)
            status = guest._wait_status(None)
        except BaseException:
            guest._end()
            raise
        finally:
            for fd in pipes:
                if fd >= 0:
                    os.close(fd)
        done = Completed(args, status, out if is_pipe(stdout) else None,
                         err if is_pipe(stderr) else None)
        if check:
            done.check_returncode()
        return done

    # -- what Guest and _Watcher use -------------------------------------

    def _check_owner(self) -> None:
        if self._owner != _pid:
            raise Error("this connection belongs to process %d: a forked "
                        "child must open its own" % self._owner)

    def _check(self) -> None:
        self._check_owner()
        if self._core is None:
            raise Error("the connection is closed")

    def _open_core(self) -> _core.Conn:
        """With the lock: the handle, or Error once closed."""
        if self._core is None:
            raise Error("the connection was closed")
        return self._core

    def _failure(self, e: _core.Error) -> Error:
        if e.errno == errno.EPIPE:
            self._broken = True
        return error_of(e)

    def _wake(self, me: Optional[_Waker]) -> None:
        for waker in self._wakers:
            if waker is not me:
                waker.wake()

    def _spawn(self, args: Args, request: Request) -> Guest:
        with self._lock:
            core = self._open_core()
            try:
                handle = core.spawn(request.spec)
            except _core.Error as e:
                raise self._failure(e) from None
            finally:
                # It read the socket, perhaps another guest's end.
                if self._wakers:
                    self._wake(None)
            return Guest(self, handle, args)

    def _collect(self, guest: Guest,
                 me: Optional[_Waker] = None) -> Optional[Status]:
        """One look (wait(0)): the guest's Status once it has ended (kept
        in the Guest), else None."""
        with self._lock:
            if guest._status is not None:
                return guest._status
            if self._core is None:
                raise Error("the connection was closed")
            # Only a call that found something to read can have collected
            # another guest's end: waking the others then, and only then,
            # cannot set off an endless round of wake-ups. Alone (`me` is
            # registered), nobody needs waking (who registers later looks
            # first), nor the look.
            readable = len(self._wakers) > (me is not None) and \
                _readable(self._fd)
            try:
                ended = guest._handle.wait(0) == 0
            except _core.Error as e:
                raise self._failure(e) from None
            finally:
                if readable:
                    self._wake(me)
            if ended:
                guest._status = Status(guest._handle)
            return guest._status

    def _wait_for(self, guest: Guest,
                  until: Optional[float]) -> Optional[Status]:
        """Wait until the guest has ended (its Status) or the deadline
        `until` passed (None)."""
        waker = _thread_waker()
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        poller.register(waker.fd, select.POLLIN)
        with self._lock:
            self._wakers.append(waker)
        try:
            while True:
                status = self._collect(guest, waker)
                ms = ms_until(until)
                if status is not None or ms == 0:
                    return status
                for fd, _ in poller.poll(ms):
                    if fd == waker.fd:
                        waker.drain()
        finally:
            with self._lock:
                self._wakers.remove(waker)

    def _watcher(self, loop: asyncio.AbstractEventLoop) -> _Watcher:
        watcher = self._watchers.get(loop)
        if watcher is None:
            watcher = self._watchers[loop] = _Watcher(self, loop)
        return watcher


class Guest:
    """A guest started by Connection.spawn(), used as subprocess.Popen is:
    poll(), wait(timeout), send_signal(), terminate(), kill(), returncode
    (-N: ended by signal N), pid, args, stdin/stdout/stderr; and status,
    how the helper saw it end. Holds its connection open.

    pid     the pid, in this process's PID namespace, of the guest's
            reaper: pid 1 of the guest's own PID namespace, which forwards
            every signal to the guest and reaps it. It is visible here
            (/proc/<pid>) but runs as root: signal the guest with
            send_signal(), terminate() or kill(), not os.kill(). In the
            guest, os.getpid() is 2, a pid of its namespace that means
            nothing to this process: a guest should not report it to its
            supervisor.
    uid     the pool uid the guest runs under.
    notes   what the helper noted when it started the guest (a degraded
            mode the policy accepted), or ''.
    args    the args it was spawned with.
    stdin   a binary file writing to the guest's stdin with stdin=PIPE,
            else None; stdout and stderr likewise, reading.

    When the last reference to a Guest goes away while the guest still
    runs, the guest is killed (no orphans): keep it while the guest should
    run. As a context manager, leaving the block closes its pipes and kills
    and waits for a guest still running.
    """

    stdin: Optional[Any]
    stdout: Optional[Any]
    stderr: Optional[Any]

    def __init__(self, conn: Connection, handle: _core.Guest,
                 args: Args) -> None:
        """Made by Connection.spawn(), with the connection's lock held."""
        self._conn = conn
        self._handle = handle
        self._status: Optional[Status] = None
        self.args = args
        self.pid = handle.pid()
        self.uid = handle.uid()
        self.notes = handle.notes()
        self.stdin = self.stdout = self.stderr = None
        # A duplicate to poll, which stays open while this Guest lives. The
        # channel is made non-blocking so that a send never waits with the
        # lock held (the duplicate shares the flag).
        fd = handle.channel_fd()
        self._channel = -1 if fd < 0 else _dup(fd)
        self._stream = False
        if fd >= 0:
            os.set_blocking(fd, False)
            sock = socket.socket(fileno=self._channel)
            self._stream = sock.type == socket.SOCK_STREAM
            sock.detach()

    def __del__(self) -> None:
        if getattr(self, "_channel", -1) >= 0:
            os.close(self._channel)

    def __repr__(self) -> str:
        if self._status is not None:
            return "<isospawn.Guest pid=%d uid=%d %r>" % (self.pid, self.uid,
                                                         self._status)
        return "<isospawn.Guest pid=%d uid=%d>" % (self.pid, self.uid)

    def __enter__(self) -> Guest:
        return self

    def __exit__(self, *exc: Any) -> None:
        for f in (self.stdin, self.stdout, self.stderr):
            if f is not None:
                f.close()
        conn = self._conn
        if conn._core is not None and conn._owner == _pid and \
                self.poll() is None:
            self.kill()
            self.wait()

    @property
    def status(self) -> Optional[Status]:
        """The Status once the guest has ended, else None (looks without
        blocking)."""
        conn = self._conn
        # Not this process's to ask; or its end can no longer be known.
        if self._status is None and conn._owner == _pid and \
                conn._core is not None:
            conn._collect(self)
        return self._status

    @property
    def returncode(self) -> Optional[int]:
        """As Popen.returncode: None until poll(), wait(), wait_async() or
        status saw the guest end (reading it does not look); then the exit
        code, -N when a signal N ended it (-9 at its timeout), or for a
        guest that never started 127, 126 or 125 (Status.returncode)."""
        return None if self._status is None else self._status.returncode

    def poll(self) -> Optional[int]:
        """The returncode if the guest has ended, else None; never blocks
        (as Popen.poll)."""
        if self._status is None:
            self._conn._check_owner()
            self._conn._collect(self)
        return self.returncode

    def wait(self, timeout: Optional[float] = None) -> int:
        """Wait for the guest to end and return its returncode (as
        Popen.wait), at most timeout seconds (None or NO_TIMEOUT: for
        ever), with the GIL released. Raises TimeoutExpired (a
        subprocess.TimeoutExpired) when the timeout expires: the guest
        keeps running."""
        return self._wait_status(timeout).returncode

    def _wait_status(self, timeout: Optional[float]) -> Status:
        until = deadline(timeout)
        status = self._status
        if status is None:
            self._conn._check_owner()
            status = self._conn._wait_for(self, until)
            if status is None:
                assert timeout is not None
                raise TimeoutExpired(self.args, timeout)
        return status

    def wait_async(self, timeout: Optional[float] = None
                   ) -> Coroutine[Any, Any, int]:
        """await guest.wait_async() in asyncio code: wait() without a
        thread, its returncode; TimeoutExpired after timeout seconds (the
        guest keeps running). Each connection puts its socket on the
        running event loop once, for all its guests awaited there. Call it
        from a coroutine (it needs the running loop)."""
        import asyncio

        limit = None if timeout is None else seconds(timeout, True)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Status] = loop.create_future()
        if self._status is not None:
            future.set_result(self._status)
        else:
            # A closed connection still answers for a guest whose end it
            # saw, and raises Error for the others.
            self._conn._check_owner()
            self._conn._watcher(loop).add(self, future)
        # The coroutine holds the future and the args only, not this
        # Guest: a cancelled wait must not keep the guest alive (and
        # running) for nobody.
        return _await(future, limit, self.args)

    def terminate(self) -> None:
        """send_signal(SIGTERM), as Popen.terminate."""
        self.send_signal(signal.SIGTERM)

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """send_signal(sig), SIGKILL unless told, as Popen.kill."""
        self.send_signal(sig)

    def send_signal(self, sig: int) -> None:
        """Ask the helper to send sig to the guest (its reaper forwards
        it); harmless once it has ended (it cannot reach a recycled pid).
        Its end is reported by poll() and wait(). ValueError for a signal
        the library refuses."""
        sig = operator.index(sig)
        conn = self._conn
        conn._check()
        with conn._lock:
            conn._open_core()
            if self._status is not None:
                return
            try:
                self._handle.kill(sig)
            except _core.Error as e:
                if e.errno == errno.EINVAL:
                    raise ValueError(e.strerror) from None
                raise conn._failure(e) from None

    def send(self, data: bytes) -> None:
        """Send one message (1 to MESSAGE_MAX bytes) on the channel, or on a
        stream channel (channel='stream') all of data, any length; blocks
        while the channel is full (the guest does not read), with the GIL
        released and the connection free for other threads.
        BrokenPipeError once the guest closed its end."""
        self._need_channel()
        if self._stream:
            _send_all(self._channel, memoryview(data).cast("B"))
            return
        message = _message(data)
        conn = self._conn
        conn._check()
        poller = _poller(self._channel, select.POLLOUT)
        while True:
            poller.poll()
            with conn._lock:
                conn._open_core()
                try:
                    self._handle.send(message)
                    return
                except _core.Error as e:
                    # EAGAIN: another thread took the room poll() saw.
                    if e.errno == errno.EPIPE:
                        raise BrokenPipeError(e.strerror) from None
                    if e.errno != errno.EAGAIN:
                        raise conn._failure(e) from None

    def recv(self, timeout: Optional[float] = None) -> Optional[bytes]:
        """Receive one message, whatever its size (a guest may send more
        than MESSAGE_MAX), or on a stream channel the bytes that have
        arrived; waits at most timeout seconds (None: for ever); None when
        nothing arrived in time. EOFError once the guest closed its end (it
        exited, or closed the channel)."""
        until = deadline(timeout)
        self._need_channel()
        conn = self._conn
        conn._check()
        poller = None
        while True:
            message = self._take() if not self._stream else _read(self._channel)
            if message == b"":
                raise EOFError("guest %d closed its end of the channel"
                               % self.pid)
            if message is not None:
                return message
            ms = ms_until(until)
            if ms == 0:
                return None
            poller = poller or _poller(self._channel, select.POLLIN)
            poller.poll(ms)

    def _take(self) -> Optional[bytes]:
        """The next message if one is there (b"" at the end), else None;
        one larger than MESSAGE_MAX in a buffer of its size."""
        conn = self._conn
        with conn._lock:
            conn._open_core()
            try:
                try:
                    message = self._handle.recv(0, _core.MESSAGE_MAX)
                except _core.Error as e:
                    if e.errno != errno.EMSGSIZE:
                        raise
                    size = self._handle.recv(0, 0)
                    message = self._handle.recv(0, size) if isinstance(size, int) \
                        else size
            except _core.Error as e:
                raise conn._failure(e) from None
        assert not isinstance(message, int)
        return message

    def channel_fileno(self) -> int:
        """The caller's end of the channel, for selectors (readable: a
        message or end-of-channel waits), non-blocking. Owned by the guest:
        do not close it. ValueError without a channel."""
        self._need_channel()
        return self._channel

    def _need_channel(self) -> None:
        if self._channel < 0:
            raise ValueError("this guest has no message channel (spawn it "
                             "with channel=True)")

    def _end(self) -> None:
        """Kill it, if it may still run; for a caller cut short."""
        try:
            if self._conn._core is not None and \
                    self._conn._owner == _pid:
                self.kill()
        except (Error, ValueError):
            pass


async def _await(future: asyncio.Future[Status], timeout: Optional[float],
                 args: Args) -> int:
    import asyncio

    if timeout is None or timeout == math.inf:
        return (await future).returncode
    try:
        return (await asyncio.wait_for(future, timeout)).returncode
    except asyncio.TimeoutError:
        raise TimeoutExpired(args, timeout) from None


def _poller(fd: int, events: int) -> select.poll:
    p = select.poll()
    p.register(fd, events)
    return p


def _send_all(fd: int, data: memoryview) -> None:
    """All of data to the stream channel fd (non-blocking), waiting in
    poll() while it is full."""
    poller = _poller(fd, select.POLLOUT)
    while data:
        try:
            data = data[os.write(fd, data):]
        except BlockingIOError:
            poller.poll()
        except BrokenPipeError as e:
            raise BrokenPipeError(e.errno, "the guest closed its end of the "
                                  "channel") from None


def _read(fd: int) -> Optional[bytes]:
    """What the stream channel fd (non-blocking) holds, b"" at its end,
    None when nothing waits."""
    try:
        return os.read(fd, 65536)
    except BlockingIOError:
        return None
    except ConnectionResetError:
        return b""


def _message(data: bytes) -> memoryview:
    """send()'s argument: a message of 1 to MESSAGE_MAX bytes."""
    message = memoryview(data).cast("B")
    if not 0 < len(message) <= _core.MESSAGE_MAX:
        raise ValueError("a message is 1 to %d bytes, not %d"
                         % (_core.MESSAGE_MAX, len(message)))
    return message


def _communicate(pipes: List[int], data: Union[bytes, memoryview]
                 ) -> Tuple[bytes, bytes]:
    """Write data to the guest's stdin (pipes[0]) and read its stdout and
    stderr (pipes[1], pipes[2]) until each is closed; -1: none. A guest
    that closes its stdin early drops the rest of the input, as subprocess
    does."""
    chunks: Tuple[List[bytes], List[bytes]] = ([], [])
    poller = select.poll()
    left = {}
    if pipes[0] >= 0 and not data:
        os.close(pipes[0])  # stdin=PIPE without input: end of file
        pipes[0] = -1
    for i, fd in enumerate(pipes):
        if fd >= 0:
            os.set_blocking(fd, False)
            poller.register(fd, select.POLLOUT if i == 0 else select.POLLIN)
            left[fd] = i
    offset = 0
    while left:
        for fd, _ in poller.poll():
            i = left[fd]
            try:
                if i == 0:
                    offset += os.write(fd, data[offset:])
                    done = offset == len(data)
                else:
                    chunk = os.read(fd, 65536)
                    chunks[i - 1].append(chunk)
                    done = not chunk
            except BlockingIOError:
                continue
            except OSError:
                done = True  # EPIPE: the guest closed its stdin
            if done:
                poller.unregister(fd)
                del left[fd]
                if i == 0:
                    os.close(fd)
                    pipes[0] = -1
    return b"".join(chunks[0]), b"".join(chunks[1])


class _Watcher:
    """The guests of one connection awaited on one asyncio loop: a
    duplicate of the connection's socket (so that a caller's own
    add_reader() on fileno() does not replace this one) and a waker, which
    other threads write when they read the socket, on the loop. On either,
    it collects what ended and answers the waiting futures."""

    def __init__(self, conn: Connection, loop: asyncio.AbstractEventLoop
                 ) -> None:
        self._conn = conn
        self._loop = loop
        self._pending: List[Tuple[Guest, asyncio.Future[Status]]] = []
        self._waker = _Waker()
        self._fd = _dup(conn._fd)
        with conn._lock:
            conn._wakers.append(self._waker)
        loop.add_reader(self._fd, self._ready)
        loop.add_reader(self._waker.fd, self._ready)

    def add(self, guest: Guest, future: asyncio.Future[Status]) -> None:
        self._pending.append((guest, future))
        future.add_done_callback(self._done)
        # Its end may be collected already, by another thread or before
        # the watcher was registered: look once soon, whatever the socket
        # says.
        self._loop.call_soon(self._ready)

    def _ready(self) -> None:
        if self._fd < 0:
            return
        self._waker.drain()
        still = []
        for guest, future in self._pending:
            if future.done():
                continue
            try:
                status = self._conn._collect(guest, self._waker)
            except Error as e:
                future.set_exception(e)
                continue
            if status is None:
                still.append((guest, future))
            else:
                future.set_result(status)
        self._pending = still
        if not still:
            self._stop()

    def _done(self, future: asyncio.Future[Status]) -> None:
        """A cancelled wait is dropped at once, so that the watcher keeps
        no Guest alive (and running) for nobody."""
        if future.cancelled():
            self._pending = [p for p in self._pending if p[1] is not future]
            if not self._pending:
                self._stop()

    def _stop(self) -> None:
        if self._fd < 0:
            return
        conn = self._conn
        if conn._watchers.get(self._loop) is self:
            del conn._watchers[self._loop]
        self._loop.remove_reader(self._fd)
        self._loop.remove_reader(self._waker.fd)
        os.close(self._fd)
        self._fd = -1
        with conn._lock:
            conn._wakers.remove(self._waker)


_default: Optional[Connection] = None


def _default_connection() -> Connection:
    """run()'s connection, opened on first use; replaced when it broke or
    when this process is a fork of the one that opened it. Another thread
    may open one meanwhile: the last one stays, the other closes when its
    run ends."""
    global _default
    conn = _default
    if conn is None or conn.closed or conn._broken or \
            conn._owner != _pid:
        conn = _default = Connection()
    return conn


def run(args: Args, *, env: Optional[Env] = None,
        timeout: Optional[float] = None,
        limits: Optional[Mapping[str, Union[int, str]]] = None,
        network: Optional[str] = None, read: Iterable[StrOrBytesPath] = (),
        write: Iterable[StrOrBytesPath] = (),
        cwd: Optional[StrOrBytesPath] = None,
        workdir: Optional[StrOrBytesPath] = None, stdin: File = None,
        stdout: File = None, stderr: File = None,
        capture_output: bool = False, input: Optional[bytes] = None,
        check: bool = False, pass_fds: Iterable[int] = (),
        wait_slot: Optional[float] = None) -> Completed:
    """Run a guest to its end, like subprocess.run, on the shared default
    connection: one helper per process, opened by the first run() (and
    again after a fork, or if its helper died), used by every thread. Use
    Connection().run() for a helper of your own. See Connection.spawn and
    Connection.run for the arguments. Returns a Completed (returncode as
    subprocess's); timeout is the guest's wall-clock limit: its expiry
    raises nothing (returncode -9, status.outcome 'timed_out').

    wait_slot: where the caller's guests (or connections) are all taken,
    wait up to that many seconds in all for one to end. The shared
    connection never waits, so that the other threads' runs go on: a run
    refused there with EAGAIN waits on a connection of its own (a helper
    for this run, itself waited for if need be), closed when it ends."""
    def on(conn: Connection, wait: Optional[float]) -> Completed:
        return conn.run(
            args, env=env, timeout=timeout, limits=limits, network=network,
            read=read, write=write, cwd=cwd, workdir=workdir, stdin=stdin,
            stdout=stdout, stderr=stderr, capture_output=capture_output,
            input=input, check=check, pass_fds=pass_fds, wait_slot=wait)

    def left() -> float:
        # At least a millisecond: a wait, however short, is asked for.
        return max(until - time.monotonic(), 0.001)

    if not wait_slot:
        return on(_default_connection(), None)
    until = deadline(wait_slot) or 0.0
    try:
        return on(_default_connection(), None)
    except Refused as e:
        if e.errno != errno.EAGAIN:
            raise
    with Connection(wait_slot=left()) as own:
        return on(own, left())
