"""Live tests of the isospawn module: a real setuid helper.

Run by python/tests/live_python under make check: root installs the test
helper, then this runs as the unprivileged caller with ISOSPAWN_HELPER
pointing at it and the module under test in ISOSPAWN_TEST_PYDIR, which
Python guests are granted (read) to import isospawn.guest from, with a
copy of this file and of examples/supervisor.py. Guests
use Debian's /usr/bin/python3 and system programs only, and get their
data through stdin, the channel or a grant.
"""
import asyncio
import errno
import json
import os
import signal
import subprocess
import textwrap
import threading
import time

import pytest

import isospawn

PY = "/usr/bin/python3"
PYDIR = os.environ.get("ISOSPAWN_TEST_PYDIR", "")

if os.geteuid() == 0 or "ISOSPAWN_HELPER" not in os.environ or not PYDIR:
    pytest.skip("live tests run as the unprivileged caller through "
                "python/tests/live_python (make check as root)",
                allow_module_level=True)


def py(code):
    """args running `code` in a Python guest."""
    return [PY, "-c", textwrap.dedent(code)]


PRINT_ENV = py("import json, os; print(json.dumps(dict(os.environ)))")


@pytest.fixture
def conn():
    with isospawn.Connection() as c:
        yield c


def guest_env(**kwargs):
    done = isospawn.run(PRINT_ENV, capture_output=True, check=True, **kwargs)
    return json.loads(done.stdout)


# --- the environment guarantee ------------------------------------------

def test_secret_in_caller_environ_absent_from_guest(monkeypatch):
    monkeypatch.setenv("ISOSPAWN_TEST_SECRET", "hunter2-do-not-leak")
    done = isospawn.run(PRINT_ENV, capture_output=True, check=True)
    assert "ISOSPAWN_TEST_SECRET" not in json.loads(done.stdout)
    assert b"hunter2-do-not-leak" not in done.stdout + done.stderr


def test_guest_keys_are_allow_list_and_path_only(monkeypatch):
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setenv("SOMETHING_NOBODY_ANTICIPATED", "x")
    env = guest_env()
    assert set(env) <= set(isospawn.FORWARDED_NAMES) | {"PATH"}
    assert env["LANG"] == "C.UTF-8"


def test_path_is_fixed_whatever_the_caller_s_path(monkeypatch):
    monkeypatch.setenv("PATH", "/home/evil/bin:/usr/bin")
    assert guest_env()["PATH"] == isospawn.GUEST_PATH


def test_override_wins_and_reaches_the_guest(monkeypatch):
    monkeypatch.setenv("LANG", "C")
    env = guest_env(env={"LANG": "C.UTF-8", "JOB_ID": "42"})
    assert env["LANG"] == "C.UTF-8"
    assert env["JOB_ID"] == "42"


def test_refused_override_raises_refused_naming_it(conn):
    with pytest.raises(isospawn.Refused) as info:
        conn.spawn(["/bin/true"], env={"LD_PRELOAD": "/tmp/evil.so"})
    assert "LD_PRELOAD" in str(info.value)
    assert info.value.errno == errno.EACCES
    with pytest.raises(isospawn.Refused) as info:
        isospawn.run(["/bin/true"], env={"GCONV_PATH": "/tmp"})
    assert "GCONV_PATH" in str(info.value)


def test_limit_over_the_policy_ceiling_refused_naming_it(conn):
    with pytest.raises(isospawn.Refused) as info:
        conn.spawn(["/bin/true"], limits={"cpu": 10 ** 6})
    assert "cpu" in str(info.value)


# --- exit codes, check, start failures ------------------------------------

def test_exit_code_reported_and_check_raises_guest_error():
    done = isospawn.run(py("raise SystemExit(3)"))
    assert done.returncode == 3
    assert (done.status.outcome, done.status.code) == ("exited", 3)
    assert done.status.signal is None and done.stdout is None
    with pytest.raises(isospawn.GuestError) as info:
        isospawn.run(py("raise SystemExit(3)"), check=True)
    assert info.value.completed.returncode == 3
    assert isospawn.run(["/bin/true"], check=True).returncode == 0


def test_signal_death_is_minus_n_and_the_command_s_128_plus_n():
    done = isospawn.run(py("import os, signal; "
                           "os.kill(os.getpid(), signal.SIGTERM)"))
    assert done.returncode == -signal.SIGTERM
    assert done.status.exit_code == 128 + signal.SIGTERM
    assert done.status.outcome == "signaled"
    assert done.status.signal == signal.SIGTERM
    assert done.status.code is None


def test_program_not_found():
    done = isospawn.run(["/nonexistent/program"])
    assert done.returncode == 127
    assert (done.status.outcome, done.status.stage,
            done.status.errno) == ("failed", "exec", errno.ENOENT)
    assert done.status.reason == "open program: No such file or directory"
    with pytest.raises(isospawn.StartFailed) as info:
        isospawn.run(["/nonexistent/program"], check=True)
    assert (info.value.stage, info.value.errno) == ("exec", errno.ENOENT)
    # As subprocess never raises CalledProcessError for what cannot start.
    assert not isinstance(info.value, subprocess.CalledProcessError)
    assert info.value.completed.returncode == 127
    assert "exec failed: open program: No such file or directory" in str(info.value)


def test_failed_start_gives_the_helpers_reason_naming_the_path():
    # sysfs cannot be idmapped, so the helper cannot lend a file of it.
    sysfs = "/sys/kernel/mm/transparent_hugepage/enabled"
    if not os.path.exists(sysfs):
        pytest.skip(sysfs + " is absent")
    done = isospawn.run(["/bin/true"], read=[sysfs])
    assert (done.status.outcome, done.status.stage,
            done.status.errno) == ("failed", "confinement", errno.EINVAL)
    assert done.status.reason.startswith("grant " + sysfs + ": its file system (sysfs)")
    assert "reason=" in repr(done.status)
    with pytest.raises(isospawn.StartFailed) as info:
        isospawn.run(["/bin/true"], read=[sysfs], check=True)
    assert done.status.reason in str(info.value)
    # What the caller cannot open itself it cannot lend: its own error.
    missing = os.path.join(PYDIR, "no-such-file")
    with pytest.raises(FileNotFoundError) as info:
        isospawn.run(["/bin/true"], read=[missing])
    assert info.value.filename == missing
    # Only a failed start has one.
    assert isospawn.run(["/bin/true"]).status.reason is None
    assert isospawn.run(["/bin/false"]).status.reason is None
    with pytest.raises(isospawn.StartFailed) as info:
        isospawn.run(["no-such-program-anywhere"])
    assert "/usr/local/bin:/usr/bin:/bin" in str(info.value)


def test_bare_name_resolved_on_the_guest_path_only(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    done = isospawn.run(["python3", "-c", "import sys; print(sys.argv[0])"],
                        capture_output=True, check=True)
    assert done.stdout == b"-c\n"


def test_timeout_ends_the_guest_as_timed_out_by_sigkill():
    t0 = time.monotonic()
    done = isospawn.run(py("import time; time.sleep(60)"), timeout=0.5)
    assert done.status.outcome == "timed_out"
    assert done.returncode == -signal.SIGKILL
    assert done.status.signal == signal.SIGKILL
    assert done.status.exit_code == 124
    assert time.monotonic() - t0 < 10
    with pytest.raises(isospawn.GuestError) as info:
        isospawn.run(py("import time; time.sleep(60)"), timeout=0.5,
                     check=True)
    assert info.value.returncode == -signal.SIGKILL
    assert "was killed by SIGKILL at its timeout" in str(info.value)


def test_limits_reach_the_guest():
    done = isospawn.run(py("""
        import resource
        print(resource.getrlimit(resource.RLIMIT_AS)[0],
              resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        """), limits={"as": "1G", "nofile": 64}, capture_output=True,
        check=True)
    assert done.stdout.split() == [b"1073741824", b"64"]


def test_tmp_and_dev_shm_sizes_take_a_suffix():
    # scratch and shm are byte limits as much as as is: "1M" is read by
    # the library's one parser, iso_limit_parse(), like the CLI's --limit.
    done = isospawn.run(py("""
        import os
        for d in ("/tmp", "/dev/shm"):
            st = os.statvfs(d)
            print(st.f_blocks * st.f_frsize)
        """), limits={"scratch": "1M", "shm": "2M"}, capture_output=True,
        check=True)
    assert done.stdout.split() == [b"1048576", b"2097152"]


# --- the guest's cgroup (tests/vm_cgroup.sh runs these in a VM) ---------

def _cgroup_controllers():
    """What /sys/fs/cgroup offers, or None where it is not cgroup v2."""
    try:
        with open("/sys/fs/cgroup/cgroup.controllers") as f:
            return set(f.read().split())
    except OSError:
        return None


HAS_CGROUP = {"memory", "pids", "cpu"} <= (_cgroup_controllers() or set())
needs_cgroup = pytest.mark.skipif(
    not HAS_CGROUP, reason="no cgroup v2 memory, pids and cpu at /sys/fs/cgroup "
    "(tests/vm_cgroup.sh runs this in a VM that has them)")


@needs_cgroup
def test_cgroup_memory_verdict_and_whole_guest_usage_in_status():
    done = isospawn.run(py("b = bytearray(256 << 20)"), limits={"memory": "64M"})
    assert done.status.outcome == "limit"
    assert done.status.limit == "memory"
    assert done.returncode == -signal.SIGKILL
    assert 0 < done.status.memory_peak <= 64 << 20
    assert done.status.cgroup_cpu > 0


@needs_cgroup
def test_cgroup_pids_reached_is_noted_and_the_guest_lives_on():
    done = isospawn.run(py("""
        import os
        n = 0
        try:
            while n < 100:
                if os.fork() == 0:
                    import time; time.sleep(30)
                n += 1
        except BlockingIOError:
            print(n)
        """), limits={"pids": 8}, capture_output=True, check=True)
    assert int(done.stdout) < 8
    assert done.status.limits_reached == ("pids",)


@pytest.mark.skipif(HAS_CGROUP, reason="this host has cgroup v2 with memory, "
                    "pids and cpu: nothing is missing")
def test_without_cgroup_the_notes_say_what_is_missing(conn):
    guest = conn.spawn(["/bin/true"])
    assert guest.wait() == 0
    assert "cgroup: missing memory, pids, cpu" in guest.notes
    assert guest.status.cgroup_cpu is None and guest.status.memory_peak is None
    assert guest.status.limits_reached == ()


# --- subprocess's conventions, side by side with subprocess -------------

ENDINGS = {
    "exit 3": "raise SystemExit(3)",
    "SIGTERM": "import os, signal; os.kill(os.getpid(), signal.SIGTERM)",
    "SIGKILL": "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
}


@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_returncode_is_subprocess_s(conn, ending):
    args = py(ENDINGS[ending])
    theirs = subprocess.run(args)
    ours = isospawn.run(args)
    assert ours.returncode == theirs.returncode, ours.status
    assert theirs.returncode in (3, -signal.SIGTERM, -signal.SIGKILL)
    p = subprocess.Popen(args)
    g = conn.spawn(args)
    assert g.wait(timeout=30) == p.wait(timeout=30)
    assert g.returncode == p.returncode and g.poll() == p.poll()


def _spin_limited(seconds):
    import resource
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def test_a_limit_s_signal_is_the_returncode_as_under_subprocess():
    args = py("while True: pass")
    theirs = subprocess.run(args, preexec_fn=lambda: _spin_limited(1),
                            timeout=60)
    ours = isospawn.run(args, limits={"cpu": 1}, timeout=60)
    assert (ours.status.outcome, ours.status.limit) == ("limit", "cpu")
    assert ours.returncode == theirs.returncode == -signal.SIGXCPU
    assert ours.returncode == -ours.status.signal


@pytest.mark.parametrize("how,sig", [("terminate", signal.SIGTERM),
                                     ("kill", signal.SIGKILL),
                                     ("send_signal", signal.SIGUSR1)])
def test_poll_and_signals_as_popen_s(conn, how, sig):
    args = ["/bin/sleep", "30"]
    p = subprocess.Popen(args)
    g = conn.spawn(args)
    try:
        time.sleep(0.2)
        assert p.poll() is None and g.poll() is None
        assert p.returncode is None and g.returncode is None
        for proc in (p, g):
            call = getattr(proc, how)
            call(sig) if how == "send_signal" else call()
        assert g.wait(timeout=10) == p.wait(timeout=10) == -sig
        assert g.poll() == p.poll() == -sig
        assert g.returncode == p.returncode == -sig
        assert g.status.outcome == "signaled" and g.status.signal == sig
        for proc in (p, g):  # harmless once ended, as Popen's
            getattr(proc, how)(*((sig,) if how == "send_signal" else ()))
    finally:
        p.kill()
        p.wait()


def test_wait_timeout_raises_timeout_expired_as_popen_s(conn):
    args = ["/bin/sleep", "30"]
    p = subprocess.Popen(args)
    g = conn.spawn(args)
    try:
        with pytest.raises(subprocess.TimeoutExpired) as theirs:
            p.wait(timeout=0.2)
        t0 = time.monotonic()
        with pytest.raises(subprocess.TimeoutExpired) as ours:
            g.wait(timeout=0.2)
        assert 0.2 <= time.monotonic() - t0 < 5
        assert isinstance(ours.value, isospawn.TimeoutExpired)
        assert isinstance(ours.value, isospawn.Error)
        for attr in ("cmd", "timeout", "output", "stdout", "stderr"):
            assert getattr(ours.value, attr) == getattr(theirs.value, attr)
        assert "still running after 0.2 seconds" in str(ours.value)
        assert g.poll() is None  # still running, as p is
        with pytest.raises(isospawn.TimeoutExpired):
            g.wait(timeout=0)
    finally:
        p.kill()
        p.wait()


def test_check_raises_a_called_process_error_as_subprocess_s():
    args = py("import sys; print('out'); print('err', file=sys.stderr); "
              "sys.exit(3)")
    with pytest.raises(subprocess.CalledProcessError) as theirs:
        subprocess.run(args, capture_output=True, check=True)
    with pytest.raises(subprocess.CalledProcessError) as ours:
        isospawn.run(args, capture_output=True, check=True)
    assert isinstance(ours.value, isospawn.GuestError)
    for attr in ("returncode", "cmd", "output", "stdout", "stderr"):
        assert getattr(ours.value, attr) == getattr(theirs.value, attr)
    assert (ours.value.returncode, ours.value.stdout) == (3, b"out\n")
    assert ours.value.completed.status.outcome == "exited"
    assert str(ours.value) == \
        "guest '/usr/bin/python3' exited with code 3 (returncode 3)"
    # And for a signal: the same negative returncode.
    args = py(ENDINGS["SIGTERM"])
    with pytest.raises(subprocess.CalledProcessError) as theirs:
        subprocess.run(args, check=True)
    with pytest.raises(isospawn.GuestError) as ours:
        isospawn.run(args, check=True)
    assert ours.value.returncode == theirs.value.returncode
    assert ours.value.stdout is ours.value.stderr is None
    assert "was killed by SIGTERM" in str(ours.value)


def test_pid_is_the_reaper_s_as_the_caller_sees_it_the_guest_s_own_is_2(
        conn):
    g = conn.spawn(py("import os, sys; print(os.getpid(), flush=True); "
                      "sys.stdin.read()"),
                   stdin=isospawn.PIPE, stdout=isospawn.PIPE)
    assert g.stdout.readline() == b"2\n"

    def nspids(pid):
        with open("/proc/%d/status" % pid) as f:
            line = next(line for line in f if line.startswith("NSpid:"))
        return [int(n) for n in line.split()[1:]]

    # The reaper: pid 1 of the guest's namespace, g.pid here.
    assert nspids(g.pid) == [g.pid, 1]
    with open("/proc/%d/task/%d/children" % (g.pid, g.pid)) as f:
        children = [int(n) for n in f.read().split()]
    assert len(children) == 1 and nspids(children[0])[1:] == [2]
    g.stdin.close()
    assert g.wait(timeout=30) == 0


def test_no_timeout_is_asked_for_with_no_timeout_or_infinity(conn):
    # The test caller's rule has a ceiling (120 s): the helper refuses no
    # timeout there, in words only ISO_TIMEOUT_NONE brings (live_core
    # shows a rule without a ceiling granting it).
    assert isospawn.NO_TIMEOUT == float("inf")
    for timeout in (isospawn.NO_TIMEOUT, float("inf")):
        with pytest.raises(isospawn.Refused) as info:
            conn.spawn(["/bin/sleep", "30"], timeout=timeout)
        assert str(info.value).startswith("no timeout is not allowed by ")
        assert info.value.errno == errno.EACCES


# --- identity -------------------------------------------------------------

def test_guest_uid_is_neither_root_nor_the_caller(conn):
    g = conn.spawn(py("import os; print(os.getuid(), os.geteuid())"),
                   stdout=isospawn.PIPE)
    out = g.stdout.read()
    assert g.wait() == 0
    assert g.uid not in (0, os.getuid())
    assert out.split() == [str(g.uid).encode()] * 2


# --- stdio ---------------------------------------------------------------

def test_input_reaches_stdin():
    done = isospawn.run(py("import sys; "
                           "sys.stdout.write(sys.stdin.read().upper())"),
                        input=b"hello", capture_output=True, check=True)
    assert done.stdout == b"HELLO"


def test_capture_of_10_mib_does_not_deadlock():
    done = isospawn.run(py("""
        import sys
        sys.stdout.buffer.write(b"x" * (10 << 20))
        sys.stdout.flush()
        sys.stderr.write("done")
        """), capture_output=True, timeout=60, check=True)
    assert len(done.stdout) == 10 << 20
    assert done.stdout.count(b"x") == 10 << 20
    assert done.stderr == b"done"


def test_closed_stdin_is_inherited_as_dev_null_never_as_ours():
    # A caller whose fd 0 is closed: what isospawn opens itself (the helper
    # socket, eventfds, pipes) must not reach the guest as its stdin.
    done = subprocess.run([PY, "-c", textwrap.dedent("""
        import os, isospawn
        os.close(0)
        conn = isospawn.Connection()
        g = conn.spawn(["/usr/bin/true"])
        g.wait()  # a waiting thread's eventfd exists from here on
        os.close(0)
        out = conn.run([sys_python, "-c",
                        "import os; print(os.readlink('/proc/self/fd/0'), "
                        "repr(os.read(0, 10)))"], capture_output=True)
        print(out.stdout.decode(), end="")
        """).replace("sys_python", repr(PY))],
        capture_output=True, text=True, timeout=60)
    assert done.stdout == "/dev/null b''\n", done.stderr


def test_stderr_to_stdout_and_devnull():
    done = isospawn.run(py("import sys; print('out'); "
                           "print('err', file=sys.stderr)"),
                        stdout=isospawn.PIPE, stderr=isospawn.STDOUT)
    assert sorted(done.stdout.split()) == [b"err", b"out"]
    done = isospawn.run(py("print('out')"), stdout=isospawn.DEVNULL)
    assert done.stdout is None and done.returncode == 0


def test_a_socket_serves_as_stdin_and_stdout_as_under_subprocess(conn):
    # A connection of a server's, handed to the guest as its stdio, the
    # way inetd or a supervisor's socket-speaking worker is run.
    import socket
    args = ["/bin/sh", "-c", "read line; echo \"got: $line\""]
    for run in (conn.run, subprocess.run):
        ours, theirs = socket.socketpair()
        with ours, theirs:
            ours.sendall(b"hello\n")
            done = run(args, stdin=theirs, stdout=theirs, timeout=30)
            assert done.returncode == 0
            theirs.close()
            assert ours.recv(64) == b"got: hello\n"


# --- waiting, killing, closing --------------------------------------------

def test_wait_timeout_raises_then_kill_ends_it(conn):
    g = conn.spawn(["/bin/sleep", "30"])
    assert g.poll() is None and g.status is None and g.returncode is None
    with pytest.raises(isospawn.TimeoutExpired):
        g.wait(timeout=0.2)
    g.kill()
    assert g.wait(timeout=10) == -signal.SIGKILL
    st = g.status
    assert (st.outcome, st.signal) == ("signaled", signal.SIGKILL)
    assert g.poll() == g.returncode == -signal.SIGKILL and g.status is st


def test_close_kills_what_is_left():
    conn = isospawn.Connection()
    g = conn.spawn(["/bin/sleep", "30"])
    assert os.path.exists("/proc/%d" % g.pid)
    conn.close()
    assert conn.closed
    deadline = time.monotonic() + 10
    while os.path.exists("/proc/%d" % g.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists("/proc/%d" % g.pid)
    with pytest.raises(isospawn.Error):
        g.wait()
    with pytest.raises(isospawn.Error):
        conn.spawn(["/bin/true"])


def test_close_wakes_a_thread_waiting_on_a_guest():
    conn = isospawn.Connection()
    g = conn.spawn(["/bin/sleep", "30"])
    raised = []

    def waiter():
        try:
            g.wait()
        except isospawn.Error as e:
            raised.append(e)

    t = threading.Thread(target=waiter)
    t.start()
    time.sleep(0.2)
    conn.close()
    t.join(5)
    assert not t.is_alive() and len(raised) == 1


def test_dropping_a_guest_kills_it(conn):
    g = conn.spawn(["/bin/sleep", "30"])
    pid = g.pid
    del g
    deadline = time.monotonic() + 10
    while os.path.exists("/proc/%d" % pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists("/proc/%d" % pid)


def test_forked_child_cannot_use_the_parent_s_connection(conn):
    g = conn.spawn(["/bin/sleep", "30"])
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            conn.spawn(["/bin/true"])
        except isospawn.Error:
            code = 0
        del g  # must not kill the parent's guest
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert g.poll() is None  # still running
    assert conn.run(["/bin/true"]).returncode == 0


# --- the channel ----------------------------------------------------------

ECHO_GUEST = py("""
    from isospawn import guest
    ch = guest.channel()
    msg = ch.recv()
    ch.send(b"pong:" + msg)
    ch.recv()
    """)


def test_channel_round_trip_timeout_and_eof(conn):
    g = conn.spawn(ECHO_GUEST, channel=True, read=[PYDIR])
    t0 = time.monotonic()
    assert g.recv(timeout=0.2) is None
    assert time.monotonic() - t0 < 1.0
    g.send(b"ping")
    assert g.recv(timeout=30) == b"pong:ping"
    g.send(b"bye")
    assert g.wait(timeout=30) == 0
    with pytest.raises(EOFError):
        g.recv(timeout=5)
    with pytest.raises(BrokenPipeError):
        g.send(b"late")


def test_channel_fileno_for_selectors(conn):
    import selectors
    g = conn.spawn(ECHO_GUEST, channel=True, read=[PYDIR])
    with selectors.DefaultSelector() as sel:
        sel.register(g.channel_fileno(), selectors.EVENT_READ)
        g.send(b"x")
        assert sel.select(timeout=30)
    assert g.recv(timeout=0) == b"pong:x"
    g.kill()
    g.wait()


def test_message_larger_than_message_max_from_the_guest_arrives(conn):
    # The guest's raw socket takes more than MESSAGE_MAX: nothing is lost.
    g = conn.spawn(py("""
        import socket
        s = socket.socket(fileno=3)
        s.send(bytes(range(256)) * 300)
        s.recv(1)
        """), channel=True)
    assert g.recv(timeout=30) == bytes(range(256)) * 300
    g.send(b"done")
    assert g.wait(timeout=30) == 0


STREAM_GUEST = py("""
    from isospawn import guest
    ch = guest.channel()
    assert ch.stream
    data = b""
    while len(data) < 1 << 20:
        data += ch.recv()
    ch.send(data[::-1])
    """)


def test_stream_channel_carries_a_megabyte_each_way(conn):
    g = conn.spawn(STREAM_GUEST, channel="stream", read=[PYDIR])
    sent = bytes(i * 13 % 251 for i in range(1 << 20))
    g.send(sent)
    back = b""
    while len(back) < len(sent):
        chunk = g.recv(timeout=30)
        assert chunk, "the stream ended after %d bytes" % len(back)
        back += chunk
    assert back == sent[::-1]
    assert g.wait(timeout=30) == 0
    with pytest.raises(EOFError):
        g.recv(timeout=5)
    with pytest.raises(ValueError):
        conn.spawn(["/bin/true"], channel="pipe")


def test_workdir_and_cwd(conn, tmp_path):
    # A directory of this process's, 0700: the guest starts there, and
    # what it leaves is this process's own.
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True, mode=0o700)
    done = conn.run(["/bin/sh", "-c", "pwd; echo result > out.txt; id -u"],
                    workdir=work, capture_output=True, check=True)
    pwd, uid = done.stdout.decode().split()
    assert pwd == os.path.realpath(work)
    assert int(uid) != os.getuid()
    assert (work / "out.txt").read_bytes() == b"result\n"
    assert (work / "out.txt").stat().st_uid == os.getuid()
    done = conn.run(["/bin/pwd"], workdir=work, cwd=work / "sub",
                    capture_output=True, check=True)
    assert done.stdout.decode().strip() == os.path.realpath(work / "sub")
    with pytest.raises(FileNotFoundError):
        conn.run(["/bin/true"], read=[work / "missing"])
    done = conn.run(["/bin/true"], cwd="/nonexistent/dir")
    assert (done.status.outcome, done.status.stage) == ("failed", "confinement")
    assert done.returncode == 125


def test_pass_fds_as_subprocess_s(conn, tmp_path):
    # The same descriptors at the same numbers, here and under
    # subprocess: a file read through one, a pipe written through another.
    data = tmp_path / "data"
    data.write_bytes(b"passed\n")
    r, w = os.pipe()
    with open(data, "rb") as f:
        fd = 40  # a number of its own, none of pytest's
        assert not os.path.exists("/proc/self/fd/40")
        os.dup2(f.fileno(), fd, inheritable=False)
        args = [PY, "-c", "import os, sys; sys.stdout.write(os.read(40, 64).decode()); "
                "os.write(%d, b'back\\n')" % w]
        for run in (conn.run, subprocess.run):
            os.lseek(fd, 0, os.SEEK_SET)
            done = run(args, pass_fds=(fd, w),
                       capture_output=True, check=True)
            assert done.stdout == b"passed\n"
            assert os.read(r, 64) == b"back\n"
        os.close(fd)
    with pytest.raises(OSError) as e:
        conn.run(["/bin/true"], pass_fds=[fd])  # closed now
    assert e.value.errno == errno.EBADF
    with pytest.raises(ValueError):
        conn.run(["/bin/true"], pass_fds=[2])
    root = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(ValueError):  # it would reach past the tree
            conn.run(["/bin/true"], pass_fds=[root])
    finally:
        os.close(root)
    os.close(r)
    os.close(w)


def test_no_channel_guest_refuses_channel_calls(conn):
    g = conn.spawn(["/bin/true"])
    for call in (lambda: g.send(b"x"), g.recv, g.channel_fileno):
        with pytest.raises(ValueError):
            call()
    assert g.wait() == 0


# --- threads and asyncio --------------------------------------------------

def test_four_threads_with_1s_guests_finish_in_about_1s():
    isospawn.run(["/bin/true"])  # the default connection, opened
    results = []

    def one():
        results.append(isospawn.run(["/bin/sleep", "1"]).returncode)

    threads = [threading.Thread(target=one) for _ in range(4)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - t0
    assert results == [0] * 4
    assert elapsed < 2.0, "took %.2f s: the GIL or a lock was held" % elapsed


def test_run_with_wait_slot_waits_without_holding_the_shared_connection(
        conn):
    # The caller's rule allows 64 guests: all held here, for 4 seconds.
    held = []
    while True:
        try:
            held.append(conn.spawn(["/bin/sleep", "4"]))
        except isospawn.Refused as e:
            assert e.errno == errno.EAGAIN, e
            break
    assert len(held) == 64
    waited = {}

    def waiter():
        t0 = time.monotonic()
        waited["done"] = isospawn.run(["/bin/true"], wait_slot=30)
        waited["s"] = time.monotonic() - t0

    thread = threading.Thread(target=waiter)
    thread.start()
    time.sleep(0.5)
    # Meanwhile the shared connection answers at once: refused, no slot.
    t0 = time.monotonic()
    with pytest.raises(isospawn.Refused) as info:
        isospawn.run(["/bin/true"])
    assert info.value.errno == errno.EAGAIN
    assert time.monotonic() - t0 < 1.5
    assert thread.is_alive()
    thread.join(30)
    assert waited["done"].returncode == 0
    assert 2 < waited["s"] < 30
    for g in held:
        g.wait(timeout=30)


def test_threads_share_one_connection_and_its_guests(conn):
    guests = [conn.spawn(["/bin/sleep", "0.5"]) for _ in range(4)]
    statuses = [None] * 4

    def wait(i):
        guests[i].wait(timeout=30)
        statuses[i] = guests[i].status

    threads = [threading.Thread(target=wait, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    extra = conn.run(["/bin/true"])  # spawns while others wait
    for t in threads:
        t.join()
    assert extra.returncode == 0
    assert [s.outcome for s in statuses] == ["exited"] * 4


DRAINS_NOW_AND_THEN = py("""
    import time
    from isospawn import guest
    ch = guest.channel()
    while True:
        time.sleep(0.3)
        while ch.recv(timeout=0) is not None:
            pass
    """)


def test_threads_sending_to_a_slow_reader_leave_the_connection_free(conn):
    # Two threads may both see room (poll), one fill it, and the other's
    # send then wait for the guest to read: it must not hold the
    # connection's lock meanwhile, or every other call on the connection
    # (poll, wait, kill, spawn) waits too, for ever once the guest stops
    # reading. A send buffer one message fills (as a smaller
    # net.core.wmem_default would), and eight senders woken by each of
    # the guest's reads, make it likely at every read.
    import socket
    g = conn.spawn(DRAINS_NOW_AND_THEN, channel=True, read=[PYDIR],
                   timeout=30)
    with socket.socket(fileno=os.dup(g.channel_fileno())) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 32768)
    stop = threading.Event()
    sent = [0] * 8

    def sender(i):
        try:
            while not stop.is_set():
                g.send(b"x" * 64000)
                sent[i] += 1
        except BrokenPipeError:
            pass  # killed below while this one waited for room

    threads = [threading.Thread(target=sender, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    worst = 0.0
    until = time.monotonic() + 5
    while time.monotonic() < until:
        t0 = time.monotonic()
        g.poll()
        worst = max(worst, time.monotonic() - t0)
        time.sleep(0.01)
    stop.set()
    g.kill()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads)
    assert g.wait(timeout=30) == -signal.SIGKILL
    assert sum(sent) > 0
    assert worst < 0.2, "poll() waited %.2f s for a sender's lock" % worst


def test_wait_async_uses_the_event_loop_not_threads(conn):
    async def main():
        guests = [conn.spawn(["/bin/sleep", "0.5"]) for _ in range(3)]
        before = threading.active_count()
        t0 = time.monotonic()
        codes = await asyncio.gather(*(g.wait_async() for g in guests))
        assert threading.active_count() == before
        return codes, time.monotonic() - t0

    codes, elapsed = asyncio.run(main())
    assert codes == [0, 0, 0]
    assert elapsed < 3


def test_wait_async_with_timeout_task_and_a_waiting_thread(conn):
    async def main():
        slow = conn.spawn(["/bin/sleep", "30"])
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(slow.wait_async(), 0.2)
        quick = conn.spawn(["/bin/sleep", "0.3"])
        other = conn.spawn(["/bin/sleep", "0.3"])
        # Another thread waits on the same connection meanwhile: whoever
        # reads the socket first, both ends are seen.
        thread_codes = []
        t = threading.Thread(target=lambda: thread_codes.append(
            other.wait(timeout=30)))
        t.start()
        task = asyncio.create_task(quick.wait_async())
        code = await asyncio.wait_for(task, 30)
        await asyncio.get_running_loop().run_in_executor(None, t.join)
        # Its own timeout: the guest keeps running.
        t0 = time.monotonic()
        with pytest.raises(isospawn.TimeoutExpired) as info:
            await slow.wait_async(timeout=0.2)
        assert 0.2 <= time.monotonic() - t0 < 5
        assert (info.value.cmd, info.value.timeout) == (slow.args, 0.2)
        assert slow.poll() is None
        slow.kill()
        return code, thread_codes, await slow.wait_async(timeout=30)

    code, thread_codes, killed = asyncio.run(main())
    assert (code, thread_codes) == (0, [0])
    assert killed == -signal.SIGKILL


def test_dropping_a_guest_after_a_cancelled_wait_async_kills_it(conn):
    # The cancelled wait must not keep the Guest alive until some later
    # event on the connection: dropping it kills the guest at once.
    async def main():
        g = conn.spawn(["/bin/sleep", "30"])
        pid = g.pid
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(g.wait_async(), 0.2)
        del g
        deadline = time.monotonic() + 10
        while os.path.exists("/proc/%d" % pid) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        return os.path.exists("/proc/%d" % pid)

    assert not asyncio.run(main())


# --- the C core's handles --------------------------------------------------

def test_core_handles_raise_rather_than_race_or_use_what_was_freed():
    # python/core.c: a call on a connection another thread uses without the
    # GIL raises EBUSY; a guest handle dropped meanwhile is freed (killed)
    # when that call returns; once the connection is closed, its guests'
    # handles raise EBADF rather than touch the guests iso_close() freed.
    from isospawn import _core
    conn = _core.Conn()

    def sleeper():
        spec = _core.Spec()
        spec.set_program(b"/bin/sleep")
        spec.set_argv([b"sleep", b"30"])
        spec.set_stdio(-1, -1, -1)
        return conn.spawn(spec)

    busy, dropped = sleeper(), sleeper()
    pid = dropped.pid()
    waiter = threading.Thread(target=busy.wait, args=(1500,))
    waiter.start()
    time.sleep(0.5)
    with pytest.raises(_core.Error) as info:
        busy.kill(signal.SIGKILL)
    assert info.value.errno == errno.EBUSY
    del dropped
    waiter.join(10)
    deadline = time.monotonic() + 10
    while os.path.exists("/proc/%d" % pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists("/proc/%d" % pid)
    assert busy.wait(0) == 1  # still running, and usable again
    conn.close()
    for call in (lambda: busy.wait(0), busy.pid, lambda: busy.kill(9),
                 conn.fd, lambda: conn.spawn(_core.Spec())):
        with pytest.raises(_core.Error) as info:
            call()
        assert info.value.errno == errno.EBADF
    conn.close()  # again: nothing


# --- argument checks -------------------------------------------------------

def test_an_unknown_limit_is_refused_naming_every_known_one(conn):
    with pytest.raises(ValueError) as info:
        conn.spawn(["/bin/true"], limits={"bogus": 1})
    assert str(info.value) == ("unknown limit 'bogus' (" +
                               ", ".join(isospawn.LIMITS) + ")")
    assert "scratch" in str(info.value) and "shm" in str(info.value)


def test_bad_arguments_raise_before_anything_is_sent(conn):
    with pytest.raises(ValueError):
        conn.spawn([])
    with pytest.raises(ValueError):
        conn.spawn(["/bin/true"], limits={"bogus": 1})
    with pytest.raises(ValueError):
        conn.spawn(["/bin/true"], limits={"cpu": "1G"})
    with pytest.raises(ValueError):
        conn.spawn(["/bin/true"], network="sometimes")
    with pytest.raises(ValueError):
        conn.spawn(["/bin/true"], timeout=0)
    with pytest.raises(ValueError):
        conn.spawn(["/bin/true"], env={"BAD NAME": "x"})
    with pytest.raises(TypeError):
        conn.spawn(["/bin/true"], read="/usr")
    with pytest.raises(ValueError):
        isospawn.run(["/bin/true"], capture_output=True, stdout=isospawn.PIPE)


# --- the example ------------------------------------------------------------

def test_example_supervisor_runs_snippets_confined():
    example = os.path.join(PYDIR, "supervisor.py")  # examples/, copied
    done = subprocess.run([PY, example], capture_output=True, text=True,
                          timeout=120, check=True)
    lines = done.stdout.splitlines()
    report = {line.split(":")[0]: line for line in lines
              if not line.startswith(" ")}
    assert '    posted: {"sum": 45}' in lines
    assert report["spin"].startswith("spin: timed_out")
    assert report["hog"].startswith("hog: exited 1")
    assert "    stderr: MemoryError" in lines
    assert '    posted: "/etc/shadow: Permission denied"' in lines
    env_line = next(line for line in lines if '"variables"' in line)
    assert "SUPERVISOR_API_TOKEN" not in env_line
    assert "PATH" in env_line
