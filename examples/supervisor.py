#!/usr/bin/python3
"""Run untrusted Python snippets under isospawn, each with a timeout,
resource limits and a message channel.

The supervisor posts each snippet a job over the channel and receives what
the snippet posts back, until the snippet ends or its time is up (the
post/recv pattern). The snippets run concurrently, on threads sharing one
connection to the helper. The code itself travels over the channel too:
nothing is written to a file the guest would have to be granted.

    python3 examples/supervisor.py              # the demo snippets below
    python3 examples/supervisor.py SNIPPET.py   # your own

Run it as a member of group isospawn after ./scripts/quickstart (which
installs the module where Debian's python3 finds it). A snippet sees two
names: `job` (what the supervisor posted) and `post(obj)` (send a
JSON-able answer back).
"""
import concurrent.futures
import json
import os
import sys

import isospawn

# The guest side: receive the job and the code, run it, let it post back.
RUNNER = r"""
import json
from isospawn import guest

channel = guest.channel()
job = json.loads(channel.recv(timeout=10))


def post(obj):
    channel.send(json.dumps(obj).encode())


exec(compile(job.pop("code"), job.pop("name"), "exec"),
     {"__name__": "__snippet__", "job": job, "post": post})
"""

DEMOS = {
    "sum": "post({'sum': sum(job['numbers'])})",
    "environment": ("import os\n"
                    "post({'variables': sorted(os.environ)})"),
    "identity": ("import os\n"
                 "post({'uid': os.getuid(), 'gid': os.getgid(),\n"
                 "      'groups': os.getgroups()})"),
    "spin": ("post('spinning')\n"
             "while True:\n"
             "    pass"),
    "hog": "post(len(bytearray(2 << 30)))  # 2 GiB: over the 'as' limit",
    "snoop": ("try:\n"
              "    post(open('/etc/shadow').read())\n"
              "except OSError as e:\n"
              "    post(f'/etc/shadow: {e.strerror}')"),
}

TIMEOUT = 5  # seconds of wall-clock time per snippet
LIMITS = {"as": "512M", "cpu": 10, "nproc": 16, "fsize": "1M"}


def grants():
    """The directory isospawn is imported from, if a guest could not read
    it otherwise (a build tree rather than an installed package), lent for
    reading: the policy's rule must allow it (grants)."""
    package = os.path.dirname(os.path.abspath(isospawn.__file__))
    where = os.path.dirname(package)
    return [] if where.startswith("/usr/") else [where]


def run_snippet(conn, name, code):
    """Post one snippet its job, collect what it posts, report its end."""
    guest = conn.spawn(["/usr/bin/python3", "-c", RUNNER], channel=True,
                       timeout=TIMEOUT, limits=LIMITS, read=grants(),
                       network="none", stdout=isospawn.DEVNULL,
                       stderr=isospawn.PIPE)
    guest.send(json.dumps({"name": name, "code": code,
                           "numbers": list(range(10))}).encode())
    posted = []
    try:
        while True:
            message = guest.recv(timeout=TIMEOUT + 5)
            if message is None:
                break
            posted.append(json.loads(message))
    except EOFError:  # the snippet ended (or was ended)
        pass
    errors = guest.stderr.read().decode(errors="replace").strip()
    guest.wait()  # its returncode, as Popen.wait(); guest.status says more
    return name, guest.uid, guest.returncode, guest.status, posted, errors


def describe(name, uid, returncode, status, posted, errors):
    if status.outcome == "exited":
        end = f"exited {returncode}"
    elif status.outcome == "failed":
        why = status.reason or os.strerror(status.errno)
        end = f"never started ({status.stage}: {why})"
    else:  # signaled, timed_out or limit: returncode -N, signal N
        end = status.outcome + (f" ({status.limit})" if status.limit else "")
        end += f", returncode {returncode}"
    print(f"{name}: {end} after {status.wall:.2f} s, uid {uid}, "
          f"peak {status.max_rss} KiB")
    for obj in posted:
        print(f"    posted: {json.dumps(obj)[:200]}")
    if errors:
        print(f"    stderr: {errors.splitlines()[-1][:200]}")


def main(paths):
    snippets = DEMOS
    if paths:
        snippets = {}
        for path in paths:
            with open(path) as f:
                snippets[os.path.basename(path)] = f.read()
    # A secret of the supervisor's: no snippet can see it.
    os.environ["SUPERVISOR_API_TOKEN"] = "do-not-leak"
    with isospawn.Connection() as conn, \
            concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        results = [pool.submit(run_snippet, conn, name, code)
                   for name, code in snippets.items()]
        for result in results:
            describe(*result.result())
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except isospawn.Error as e:
        sys.exit(f"supervisor: {e}")
