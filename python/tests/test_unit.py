"""Unit tests of the isospawn module: no privilege, no helper.

Run by python/tests/unit_python under make check, against the built
module. What needs the setuid helper is in test_live.py.
"""
import errno
import inspect
import math
import os
import re
import socket
import subprocess
import sys
import textwrap
import types

import pytest

import isospawn
import isospawn.guest
from isospawn import _core

ALLOWED = ("PYTHONPATH", "PYTHONHOME", "LD_LIBRARY_PATH", "LANG", "LC_ALL",
           "LC_CTYPE", "PYTHONIOENCODING", "PYTHONUTF8", "TMPDIR")


def test_forwarded_names_and_guest_path_are_the_c_library_s():
    assert isospawn.FORWARDED_NAMES == ALLOWED
    assert isospawn.GUEST_PATH == "/usr/local/bin:/usr/bin:/bin"


def test_limits_are_the_c_library_s_every_one():
    # scratch (/tmp) and shm (/dev/shm) too: the module listed six.
    assert isospawn.LIMITS == ("cpu", "as", "nofile", "nproc", "fsize",
                               "stack", "scratch", "shm", "memory", "pids",
                               "cpus")


def test_stdio_constants_are_subprocess_s():
    assert (isospawn.PIPE, isospawn.STDOUT, isospawn.DEVNULL) == (
        subprocess.PIPE, subprocess.STDOUT, subprocess.DEVNULL)


def test_build_env_result_exact_and_input_unchanged():
    source = {"PATH": "/home/me/bin:/usr/bin", "LANG": "C.UTF-8",
              "AWS_SECRET_ACCESS_KEY": "hunter2", "TMPDIR": "/tmp",
              "PYTHONPATH": "/opt/lib"}
    overrides = {"MODE": "fast", "LANG": "C"}
    source_before, overrides_before = dict(source), dict(overrides)

    env = isospawn.build_env(source, overrides)

    assert env == {"PYTHONPATH": "/opt/lib", "LANG": "C", "TMPDIR": "/tmp",
                   "PATH": isospawn.GUEST_PATH, "MODE": "fast"}
    assert source == source_before and overrides == overrides_before
    assert isospawn.build_env(source, overrides) == env


def test_build_env_path_is_fixed_whatever_the_source_says():
    assert isospawn.build_env({"PATH": "/evil"}) == {
        "PATH": isospawn.GUEST_PATH}
    assert isospawn.build_env({}) == {"PATH": isospawn.GUEST_PATH}


def test_build_env_refuses_a_loader_override_naming_it():
    with pytest.raises(isospawn.Refused) as info:
        isospawn.build_env({}, {"LD_PRELOAD": "/tmp/evil.so"})
    assert "LD_PRELOAD" in str(info.value)
    assert info.value.errno == errno.EPERM
    assert isinstance(info.value, isospawn.Error)


def test_build_env_refuses_malformed_override_and_checks_names():
    with pytest.raises(isospawn.Refused) as info:
        isospawn.build_env({}, {"1BAD": "x"})
    assert "1BAD" in str(info.value)
    assert info.value.errno == errno.EINVAL
    with pytest.raises(ValueError):
        isospawn.build_env({"A=B": "c"})
    with pytest.raises(TypeError):
        isospawn.build_env(["LANG=C"])


def test_exception_hierarchy_and_attributes():
    for cls in (isospawn.Refused, isospawn.StartFailed, isospawn.GuestError,
                isospawn.TimeoutExpired):
        assert issubclass(cls, isospawn.Error)
    assert issubclass(isospawn.Error, Exception)
    e = isospawn.Error("x")
    assert e.errno is None and e.stage is None and e.completed is None
    # subprocess's own, so that code written for subprocess catches them.
    assert issubclass(isospawn.GuestError, subprocess.CalledProcessError)
    assert issubclass(isospawn.TimeoutExpired, subprocess.TimeoutExpired)
    # A guest that never started did not run and fail (subprocess raises
    # OSError for a program it cannot start, never CalledProcessError).
    assert not issubclass(isospawn.StartFailed, subprocess.CalledProcessError)


def test_guest_error_has_called_process_error_s_attributes_and_our_words():
    theirs = subprocess.CalledProcessError(-15, ["/bin/x"], b"o", b"e")
    ours = isospawn.GuestError("guest '/bin/x' was killed by SIGTERM "
                               "(returncode -15)", -15, ["/bin/x"], b"o", b"e")
    for attr in ("returncode", "cmd", "output", "stdout", "stderr"):
        assert getattr(ours, attr) == getattr(theirs, attr)
    assert str(ours) == "guest '/bin/x' was killed by SIGTERM (returncode -15)"
    assert ours.errno is None and ours.completed is None


def test_timeout_expired_has_subprocess_s_attributes():
    theirs = subprocess.TimeoutExpired(["/bin/sleep", "9"], 0.5)
    ours = isospawn.TimeoutExpired(["/bin/sleep", "9"], 0.5)
    for attr in ("cmd", "timeout", "output", "stdout", "stderr"):
        assert getattr(ours, attr) == getattr(theirs, attr)
    assert str(ours) == "guest '/bin/sleep' still running after 0.5 seconds"


class _SpecRecorder:
    """A _core.Spec whose set_timeout() calls are recorded."""

    def __init__(self, spec):
        self._spec = spec
        self.timeouts = []

    def set_timeout(self, ms):
        self.timeouts.append(ms)
        self._spec.set_timeout(ms)

    def __getattr__(self, name):
        return getattr(self._spec, name)


def _timeouts_sent(monkeypatch, timeout):
    from isospawn import _spec
    specs = []
    real = _core.Spec

    def recorder():
        specs.append(_SpecRecorder(real()))
        return specs[-1]

    monkeypatch.setattr(_spec._core, "Spec", recorder)
    _spec.Request(["/bin/true"], None, timeout, None, None, (), (),
                  [None, None, None], False).close()
    return specs[0].timeouts


def test_no_timeout_is_infinity_and_sends_the_library_s_timeout_none(
        monkeypatch):
    assert _core.TIMEOUT_NONE == 2**64 - 1  # ISO_TIMEOUT_NONE, UINT64_MAX
    assert isospawn.NO_TIMEOUT == float("inf")
    for timeout in (isospawn.NO_TIMEOUT, float("inf"), math.inf):
        assert _timeouts_sent(monkeypatch, timeout) == [_core.TIMEOUT_NONE]
    assert _timeouts_sent(monkeypatch, None) == []  # the policy's default
    # Whole milliseconds rounded up, never 0 and never TIMEOUT_NONE.
    assert _timeouts_sent(monkeypatch, 0.0001) == [1]
    assert _timeouts_sent(monkeypatch, 2.5) == [2500]
    huge = _timeouts_sent(monkeypatch, 1e300)[0]
    assert 366 * 86400 * 1000 < huge < _core.TIMEOUT_NONE
    for bad in (0, -1, float("-inf"), float("nan")):
        with pytest.raises(ValueError) as info:
            _timeouts_sent(monkeypatch, bad)
        assert "NO_TIMEOUT" in str(info.value)


def test_wait_slot_sends_whole_milliseconds_rounded_up_and_none_for_none(
        monkeypatch):
    from isospawn import _spec
    sent = []
    real = _core.Spec

    class Recorder(_SpecRecorder):
        def set_wait_slot(self, ms):
            sent.append(ms)
            self._spec.set_wait_slot(ms)

    monkeypatch.setattr(_spec._core, "Spec", lambda: Recorder(real()))
    for wait_slot in (None, 0, 0.0001, 2.5, math.inf):
        _spec.Request(["/bin/true"], None, None, None, None, (), (),
                      [None, None, None], False,
                      wait_slot=wait_slot).close()
    assert sent == [1, 2500, _core.TIMEOUT_NONE]  # None and 0: no wait
    assert _spec.wait_ms(None) == _spec.wait_ms(0) == 0
    for bad in (-1, float("nan"), "5"):
        with pytest.raises((ValueError, TypeError)):
            _spec.wait_ms(bad)
    for call in (isospawn.run, isospawn.Connection.spawn,
                 isospawn.Connection.run, isospawn.Connection):
        assert "wait_slot" in inspect.signature(call).parameters


def test_status_gives_the_reason_beside_stage_and_errno():
    for name in ("stage", "errno", "reason"):
        assert "For 'failed'" in getattr(isospawn.Status, name).__doc__


def test_every_public_name_has_a_docstring():
    names = [n for n in dir(isospawn) if not n.startswith("_")]
    missing = []
    for name in names:
        obj = getattr(isospawn, name)
        if inspect.isclass(obj) or callable(obj) or inspect.ismodule(obj):
            if not (obj.__doc__ or "").strip():
                missing.append(name)
            if inspect.isclass(obj):
                for attr, value in vars(obj).items():
                    described = callable(value) or isinstance(
                        value, (types.GetSetDescriptorType,
                                types.MemberDescriptorType))
                    if (described and not attr.startswith("_") and
                            not (value.__doc__ or "").strip()):
                        missing.append(name + "." + attr)
    assert not missing
    assert "Threads" in isospawn.__doc__


def test_pydoc_renders_the_module():
    out = subprocess.run([sys.executable, "-m", "pydoc", "isospawn"],
                         capture_output=True, text=True, check=True).stdout
    for name in ("Connection", "spawn", "wait_async", "build_env",
                 "Refused", "FORWARDED_NAMES", "Status", "NO_TIMEOUT",
                 "TimeoutExpired", "terminate", "send_signal"):
        assert name in out
    # The guest's side, documented here: isospawn.guest.Channel.
    assert "class Channel(" in out and "isospawn.guest.channel()" in out
    assert isospawn.Channel is isospawn.guest.Channel
    assert "Channel" in isospawn.guest.__all__


def test_guest_pid_is_documented_as_the_reaper_s():
    doc, guest_doc = (" ".join(d.split()) for d in (isospawn.Guest.__doc__,
                                                    isospawn.guest.__doc__))
    assert "reaper: pid 1 of the guest's own PID namespace" in doc
    assert "os.getpid() is 2" in doc and "os.getpid() is 2" in guest_doc


def test_guest_channel_is_none_outside_a_guest(monkeypatch):
    monkeypatch.delenv("ISOSPAWN_CHANNEL_FD", raising=False)
    assert isospawn.guest.channel() is None


def run_python(code, **kwargs):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, **kwargs)


def test_guest_channel_is_none_for_what_is_not_a_unix_channel_socket():
    # A fresh interpreter each time: channel() keeps the one it found.
    r, w = os.pipe()
    stream, _ = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    dgram, _ = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    fds = (r, stream.fileno(), dgram.fileno(), tcp.fileno())
    try:
        for value in ("", "x", "3x", "-1", "99999999999", str(r),
                      str(dgram.fileno()), str(tcp.fileno()), "1000"):
            done = run_python("""
                import isospawn.guest
                print(isospawn.guest.channel())
                """, env=dict(os.environ, ISOSPAWN_CHANNEL_FD=value),
                pass_fds=fds)
            assert done.stdout == "None\n", (value, done.stderr)
        # A stream one is a channel too (channel='stream').
        done = run_python("""
            import isospawn.guest
            print(isospawn.guest.channel().stream)
            """, env=dict(os.environ, ISOSPAWN_CHANNEL_FD=str(stream.fileno())),
            pass_fds=fds)
        assert done.stdout == "True\n", done.stderr
    finally:
        os.close(r)
        os.close(w)
        for s in (stream, dgram, tcp):
            s.close()


def test_guest_channel_talks_on_the_named_socket():
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with mine:
        proc = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent("""
                import time, isospawn.guest
                ch = isospawn.guest.channel()
                assert ch is isospawn.guest.channel()
                t0 = time.monotonic()
                assert ch.recv(timeout=0.2) is None
                assert time.monotonic() - t0 < 1.5
                ch.send(b"ready")
                msg = ch.recv(timeout=10)
                ch.send(b"pong:" + msg)
                try:
                    ch.recv()
                except EOFError:
                    ch.send(b"saw EOF")
                """)],
            env=dict(os.environ, ISOSPAWN_CHANNEL_FD=str(theirs.fileno())),
            pass_fds=(theirs.fileno(),))
        theirs.close()
        mine.settimeout(10)
        assert mine.recv(65536) == b"ready"
        mine.sendall(b"ping")
        assert mine.recv(65536) == b"pong:ping"
        mine.shutdown(socket.SHUT_WR)
        assert mine.recv(65536) == b"saw EOF"
        assert proc.wait(10) == 0


def test_guest_channel_refuses_empty_and_oversize_messages():
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with mine, theirs:
        done = run_python("""
            import isospawn, isospawn.guest
            ch = isospawn.guest.channel()
            for data in (b"", b"x" * (isospawn.MESSAGE_MAX + 1)):
                try:
                    ch.send(data)
                except ValueError:
                    print("refused", len(data))
            ch.close()
            print(ch.closed, isospawn.guest.channel() is None)
            """, env=dict(os.environ, ISOSPAWN_CHANNEL_FD=str(theirs.fileno())),
            pass_fds=(theirs.fileno(),))
        assert done.stdout.split("\n")[:3] == [
            "refused 0", "refused %d" % (isospawn.MESSAGE_MAX + 1),
            "True True"], done.stderr


def test_core_wraps_every_spec_setter_of_the_public_header():
    srcdir = os.environ.get("ISO_SRCDIR")
    if not srcdir:
        pytest.skip("ISO_SRCDIR is unset: run it through python/tests/unit_python")
    with open(os.path.join(srcdir, "include", "isospawn.h")) as f:
        setters = set(re.findall(r"\biso_spec_((?:set|add)_\w+)\(", f.read()))
    assert "set_program" in setters and "add_write_path" in setters
    assert setters <= set(dir(_core.Spec))


def test_core_error_carries_errno_and_the_library_s_message():
    spec = _core.Spec()
    with pytest.raises(_core.Error) as info:
        spec.set_program(b"rel/x")
    assert info.value.errno == errno.EINVAL
    assert info.value.strerror == 'program "rel/x": not an absolute path'
    with pytest.raises(_core.Error) as info:
        spec.set_stdio(os.open("/dev/null", os.O_RDONLY) + 1000, 1, 2)
    assert info.value.errno == errno.EBADF
    assert "is not open" in info.value.strerror
    with pytest.raises(TypeError):
        spec.set_argv(["str, not bytes"])
