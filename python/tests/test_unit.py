"""Unit tests of the isospawn module: no privilege, no helper.

Run by python/tests/unit_python under make check, against the built
module. What needs the setuid helper is in test_live.py.
"""
import errno
import inspect
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
                               "stack", "scratch", "shm")


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
    for cls in (isospawn.Refused, isospawn.StartFailed, isospawn.GuestError):
        assert issubclass(cls, isospawn.Error)
    assert issubclass(isospawn.Error, Exception)
    e = isospawn.Error("x")
    assert e.errno is None and e.stage is None and e.completed is None


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
                 "Refused", "FORWARDED_NAMES", "Status"):
        assert name in out


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
