"""spawn()'s and run()'s arguments into a _core.Spec, as the isospawn
command reads its options: bare program names looked up in GUEST_PATH
only, limits with K/M/G/T suffixes, stdio as subprocess takes it. Every
mistake is raised here, before anything is sent."""
from __future__ import annotations

import errno
import math
import os
import select
import stat
import time
from typing import IO, Any, Dict, Iterable, List, Mapping, Optional, Union

from . import _core
from ._errors import Refused, StartFailed

# subprocess's values, so that subprocess.PIPE works here too.
PIPE = -1
STDOUT = -2
DEVNULL = -3

# spawn(timeout=NO_TIMEOUT): no deadline at all, an infinite number of
# seconds (wait(timeout=NO_TIMEOUT) waits for ever likewise).
NO_TIMEOUT = math.inf

LIMITS = tuple(_core.limit_name(i) or "" for i in range(_core.LIMIT_COUNT))
_CPUS = _core.limit_from_name("cpus")

StrOrBytesPath = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
Args = Union[StrOrBytesPath, Iterable[StrOrBytesPath]]
# None (inherit), a descriptor, a file object, PIPE, DEVNULL or STDOUT.
File = Union[None, int, IO[Any]]
Env = Union[Mapping[str, StrOrBytesPath], Mapping[bytes, StrOrBytesPath]]

_NETWORKS = {"none": _core.NETWORK_NONE, "host": _core.NETWORK_HOST}
# spawn(channel=...): a message channel, a byte stream, or none.
ChannelKind = Union[bool, str, None]
_CHANNELS = {True: _core.CHANNEL_MESSAGES, "messages": _core.CHANNEL_MESSAGES,
             "stream": _core.CHANNEL_STREAM}


def channel_kind(channel: ChannelKind) -> int:
    """spawn()'s channel as the library's kind: 0 for none."""
    if channel is None or channel is False:
        return 0
    if isinstance(channel, (bool, str)) and channel in _CHANNELS:
        return _CHANNELS[channel]
    raise ValueError("channel must be True (or 'messages'), 'stream', or False, "
                     "not %r" % (channel,))
_PATH_MAX = 4096


def stdio_guard() -> None:
    """Open /dev/null on each of descriptors 0, 1 and 2 that is closed, so
    that no descriptor of ours can take its number and reach a guest as
    inherited stdio, and a guest to inherit a closed one gets /dev/null.
    Called before a pipe is made and when a guest is to inherit a closed
    one; duplicates are made above 2, and libisospawn moves its own
    descriptors there."""
    p = select.poll()
    for fd in range(3):
        p.register(fd, 0)  # only POLLNVAL, for a closed one
    for fd, events in p.poll(0):
        if not events & select.POLLNVAL:
            continue
        # The lowest free number: fd itself, as those below are open.
        null = os.open("/dev/null", os.O_RDWR)
        if null != fd:
            os.close(null)
            raise OSError(errno.EBADF, os.strerror(errno.EBADF), fd)
        # Inherited stdio survives exec, as the one it stands for would.
        os.set_inheritable(fd, True)


def _mapping_items(mapping: Any, what: str) -> Iterable[Any]:
    if not isinstance(mapping, dict) and not hasattr(mapping, "items"):
        raise TypeError("%s must be a mapping" % what)
    return list(mapping.items())


def environ_of(mapping: Any, what: str) -> List[bytes]:
    """A mapping as b"NAME=value" entries."""
    entries = []
    for name, value in _mapping_items(mapping, what):
        name = os.fsencode(name)
        if b"=" in name:
            raise ValueError("%s: name %r contains '='" % (what,
                                                        os.fsdecode(name)))
        entries.append(name + b"=" + os.fsencode(value))
    return entries


def build_env(source: Env, overrides: Optional[Env] = None) -> Dict[str, str]:
    """The guest environment the helper would build, by the same pure
    function (iso_build_env): from the mapping `source` only the
    FORWARDED_NAMES, then PATH=GUEST_PATH whatever source says, then
    `overrides` merged last and validated (well-formed names, bounded
    values, no loader variables such as LD_PRELOAD). Reads only its
    arguments and changes neither. With the default rules; the helper
    applies the administrator's, which may be narrower. Raises Refused
    (.errno EINVAL, EPERM or E2BIG) naming the variable that is not
    allowed."""
    src = environ_of(source, "source")
    ovr = None if overrides is None else environ_of(overrides, "overrides")
    try:
        env = _core.build_env(src, ovr)
    except _core.Error as e:
        if e.errno == errno.ENOMEM:
            raise MemoryError() from None
        raise Refused(e.strerror, errno=e.errno) from None
    return dict(os.fsdecode(entry).split("=", 1) for entry in env)


def _resolve_program(arg: bytes) -> bytes:
    """The program as the helper needs it, an absolute path, as the
    isospawn command finds it: a bare name in GUEST_PATH only (the guest
    would not have the caller's PATH either), a relative path from the
    working directory with its directory resolved."""
    if arg.startswith(b"/"):
        path = arg
    elif b"/" in arg:
        directory, _, name = arg.rpartition(b"/")
        path = os.path.join(_real(directory, arg), name)
    else:
        for entry in _core.GUEST_PATH.split(":"):
            path = os.fsencode(entry) + b"/" + arg
            try:
                if stat.S_ISREG(os.stat(path).st_mode):
                    break
            except OSError:
                pass
        else:
            raise StartFailed("%s: not found in %s" % (os.fsdecode(arg),
                                                       _core.GUEST_PATH),
                              errno=errno.ENOENT, stage="exec")
    if len(path) >= _PATH_MAX:
        raise ValueError("%s: path too long" % os.fsdecode(arg))
    return path


def _real(path: bytes, shown: bytes) -> bytes:
    """realpath(3): OSError naming `shown` when a component is missing."""
    try:
        os.stat(path)
    except OSError as e:
        raise OSError(e.errno, e.strerror, os.fsdecode(shown)) from None
    return os.path.realpath(path)


def _limit_value(value: Any, which: int) -> int:
    """A count or 'unlimited', or for sizes a K/M/G/T (1024-based)
    multiple, or for cpus a number of CPUs (1.5 or '1.5'): what the
    isospawn command's --limit takes, read by the same function."""
    if which == _CPUS and isinstance(value, (int, float)) and \
            not isinstance(value, bool):
        # CPUs, not the library's thousandths of one.
        value = repr(value) if isinstance(value, float) else str(value)
    if isinstance(value, int):
        return value
    if not isinstance(value, str):
        raise TypeError("a limit is an int or a str such as '1G' or "
                        "'unlimited'")
    try:
        return _core.limit_parse(value, which)
    except _core.Error as e:
        if e.errno == errno.ERANGE:
            raise ValueError("limit value %r is too large" % value) from None
    # The library, asked with "1K", says whether this limit takes a suffix.
    try:
        _core.limit_parse("1K", which)
        suffix = " (K/M/G/T suffix allowed)"
    except _core.Error:
        suffix = " of CPUs (at most 3 decimals)" if which == _CPUS else ""
    raise ValueError("limit value %r: expected a number%s or 'unlimited'"
                     % (value, suffix))


def seconds(timeout: float, zero_ok: bool) -> float:
    """A timeout in seconds: a number > 0 (or >= 0 if zero_ok), infinity
    (NO_TIMEOUT) included; ValueError else (NaN too)."""
    if isinstance(timeout, (str, bytes)):
        raise TypeError("timeout must be a number, not %s"
                        % type(timeout).__name__)
    seconds = float(timeout)
    if seconds > 0 or (zero_ok and seconds == 0):
        return seconds
    raise ValueError("timeout must be None or a number of seconds >= 0"
                     if zero_ok else "timeout must be None, NO_TIMEOUT or "
                     "a number of seconds > 0")


def timeout_ms(timeout: float) -> int:
    """spawn()'s timeout as iso_spec_set_timeout() takes it: TIMEOUT_NONE
    for NO_TIMEOUT, else whole milliseconds rounded up so that it never
    becomes 0 (the policy's default), and far below TIMEOUT_NONE (one
    longer than any rule allows is the helper's to refuse, in its words)."""
    s = seconds(timeout, False)
    if s == math.inf:
        return _core.TIMEOUT_NONE
    return math.ceil(min(s, 1e15) * 1000)


def wait_ms(wait_slot: Optional[float]) -> int:
    """wait_slot= as iso_spec_set_wait_slot() and iso_open_wait() take it:
    0 for None or 0 (no wait), whole milliseconds rounded up, TIMEOUT_NONE
    for math.inf (as long as it takes)."""
    if wait_slot is None:
        return 0
    s = seconds(wait_slot, True)
    if s == math.inf:
        return _core.TIMEOUT_NONE
    return math.ceil(min(s, 1e15) * 1000)


def deadline(timeout: Optional[float]) -> Optional[float]:
    """The monotonic deadline a `timeout` argument sets; None for None."""
    if timeout is None:
        return None
    return time.monotonic() + min(seconds(timeout, True), 1e9)


def ms_until(deadline: Optional[float]) -> Optional[int]:
    """Milliseconds until deadline for poll(): None for none, 0 once
    passed."""
    if deadline is None:
        return None
    return max(0, math.ceil((deadline - time.monotonic()) * 1000))


def is_pipe(f: File) -> bool:
    return isinstance(f, int) and f == PIPE


class Request:
    """A Spec made from spawn()'s arguments, and the pipes made for it:
    ours (`pipes`, None when there are none, else -1 where none) and the
    guest's ends, closed by close() after the spawn."""

    def __init__(self, args: Args, env: Optional[Env], timeout: Optional[float],
                 limits: Optional[Mapping[str, Union[int, str]]],
                 network: Optional[str], read: Iterable[StrOrBytesPath],
                 write: Iterable[StrOrBytesPath], stdio: List[File],
                 channel: ChannelKind, cwd: Optional[StrOrBytesPath] = None,
                 workdir: Optional[StrOrBytesPath] = None,
                 pass_fds: Iterable[int] = (),
                 wait_slot: Optional[float] = None) -> None:
        self.pipes: Optional[List[int]] = None
        self._theirs: List[int] = []
        spec = self.spec = _core.Spec()
        # The forwarded names are picked from the environment now, with the
        # GIL held, so that no thread changes it while the spawn reads it
        # (os.environ's changes reach it through putenv).
        spec.set_source_env()
        try:
            self._program(args)
            if env is not None:
                for name, value in _mapping_items(env, "env"):
                    _set("env", spec.set_env, os.fsencode(name),
                         os.fsencode(value))
            if limits is not None:
                for name, value in _mapping_items(limits, "limits"):
                    self._limit(os.fsdecode(os.fsencode(name)), value)
            if timeout is not None:
                spec.set_timeout(timeout_ms(timeout))
            if wait_slot:
                spec.set_wait_slot(wait_ms(wait_slot))
            if network is not None:
                if network not in _NETWORKS:
                    raise ValueError("network must be 'none', 'host' or "
                                     "None, not %r" % (network,))
                spec.set_network(_NETWORKS[network])
            if read:
                _paths("read", read, spec.add_read_path)
            if write:
                _paths("write", write, spec.add_write_path)
            if workdir is not None:
                _paths("workdir", [workdir], spec.set_workdir)
            if cwd is not None:
                path = os.fsencode(cwd)
                # As the isospawn command does: a relative one names what
                # the caller sees from here (lent with workdir, say).
                _set("cwd", spec.set_cwd,
                     path if path.startswith(b"/") else _real(path, path))
            self._stdio(stdio)
            spec.set_channel(channel_kind(channel))
            self._pass_fds(pass_fds)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Close the guest's ends, and ours that nobody took."""
        for fd in self._theirs + self.take_pipes():
            if fd >= 0:
                os.close(fd)
        self._theirs = []

    def take_pipes(self) -> List[int]:
        """Our ends of the pipes (-1 where none; [] without any), which the
        caller closes from now on."""
        pipes, self.pipes = self.pipes, None
        return pipes or []

    def _program(self, args: Args) -> None:
        if isinstance(args, (list, tuple)):
            items: List[Any] = list(args)
        elif isinstance(args, (str, bytes, os.PathLike)):
            items = [args]
        else:
            try:
                items = list(args)
            except TypeError:
                raise TypeError("args must be a sequence of str, bytes or "
                                "path-like objects") from None
        if not items:
            raise ValueError("args is empty: no program")
        argv = [os.fsencode(a) for a in items]
        program = _resolve_program(argv[0])
        what = program
        try:
            self.spec.set_program(program)
            what = b"args"
            self.spec.set_argv(argv)
        except _core.Error as e:
            raise _invalid(what, e) from None

    def _limit(self, name: str, value: Any) -> None:
        try:
            which = _core.limit_from_name(name)
        except _core.Error:
            raise ValueError("unknown limit '%s' (%s)"
                             % (name, ", ".join(LIMITS))) from None
        _set(name, self.spec.set_limit, which, _limit_value(value, which))

    def _pass_fds(self, pass_fds: Iterable[int]) -> None:
        for fd in pass_fds:
            if not isinstance(fd, int) or isinstance(fd, bool):
                raise TypeError("pass_fds takes descriptors (int), not %r" % (fd,))
            try:
                self.spec.pass_fd(fd)
            except _core.Error as e:
                if e.errno == errno.EBADF:
                    raise OSError(e.errno, os.strerror(e.errno)) from None
                raise _invalid("pass_fds", e) from None

    def _stdio(self, stdio: List[File]) -> None:
        fds = [0, 1, 2]
        for i, f in enumerate(stdio):
            if f is None:
                continue  # inherited
            fd = f if isinstance(f, int) else _fileno(f)
            if fd == PIPE:
                if self.pipes is None:
                    stdio_guard()  # before our first pipe
                    self.pipes = [-1, -1, -1]
                r, w = os.pipe()
                ours, theirs = (w, r) if i == 0 else (r, w)
                self.pipes[i] = ours
                self._theirs.append(theirs)
                fds[i] = theirs
            elif fd == DEVNULL:
                fds[i] = -1
            elif fd == STDOUT:
                if i != 2:
                    raise ValueError("STDOUT is only for stderr")
                fds[2] = fds[1]
            elif fd < 0:
                raise ValueError("bad file descriptor %d" % fd)
            else:
                fds[i] = fd
        try:
            self.spec.set_stdio(*fds)
            return
        except _core.Error as e:
            if e.errno != errno.EBADF:
                raise OSError(e.errno, os.strerror(e.errno)) from None
        # A closed 0, 1 or 2 to inherit: the guest gets /dev/null for it.
        stdio_guard()
        try:
            self.spec.set_stdio(*fds)
        except _core.Error as e:
            raise OSError(e.errno, os.strerror(e.errno)) from None


def _set(what: Union[str, bytes], setter: Any, *args: Any) -> None:
    """A spec setter's call; ValueError naming `what` when it fails."""
    try:
        setter(*args)
    except _core.Error as e:
        raise _invalid(what, e) from None


def _invalid(what: Union[str, bytes], e: _core.Error) -> Exception:
    if e.errno == errno.ENOMEM:
        return MemoryError()
    return ValueError("%s: %s" % (os.fsdecode(what), e.strerror))


def _paths(what: str, paths: Iterable[StrOrBytesPath], add: Any) -> None:
    if isinstance(paths, (str, bytes)):
        raise TypeError("%s must be a sequence of paths, not one path" % what)
    for p in paths:
        path = os.fsencode(p)
        # The library opens it as this process: an OSError (such as
        # FileNotFoundError) naming it now, as subprocess would.
        _real(path, path)
        _set(what, add, path)


def _fileno(f: Any) -> int:
    if not hasattr(f, "fileno"):
        raise TypeError("stdin, stdout and stderr take None, a descriptor, a "
                        "file object, PIPE, DEVNULL or STDOUT")
    fd = f.fileno()
    if not isinstance(fd, int) or fd < 0:
        raise ValueError("fileno() returned %r" % (fd,))
    return fd
