"""The Python rows of isospawn-bench (bench/bench.c runs this, as the
unprivileged caller, with the module under test on PYTHONPATH):

    bench_python.py isospawn     for each line read, one
                                 Connection().spawn(["/bin/true"]).wait()
                                 on one warm connection; prints its time
    bench_python.py subprocess N WARMUP
                                 WARMUP untimed subprocess.run(["/bin/true"]),
                                 then N timed, each printed

Times are measured here (time.monotonic_ns), in microseconds, one per
line. A failure exits 1 with the reason on stderr.
"""
import sys
import time


def timed(once):
    t0 = time.monotonic_ns()
    once()
    return (time.monotonic_ns() - t0) / 1000


def serve_isospawn():
    import isospawn
    conn = isospawn.Connection()  # one helper, started untimed

    def once():
        guest = conn.spawn(["/bin/true"])
        if guest.wait() != 0:
            sys.exit("guest /bin/true: %r" % (guest.status,))

    for _ in sys.stdin:
        print("%.1f" % timed(once), flush=True)


def batch_subprocess(n, warmup):
    import subprocess

    def once():
        subprocess.run(["/bin/true"], check=True)

    times = [timed(once) for _ in range(warmup + n)][warmup:]
    sys.stdout.write("".join("%.1f\n" % t for t in times))


if __name__ == "__main__":
    if sys.argv[1:] == ["isospawn"]:
        serve_isospawn()
    elif sys.argv[1] == "subprocess":
        batch_subprocess(int(sys.argv[2]), int(sys.argv[3]))
    else:
        sys.exit("usage: bench_python.py isospawn | subprocess N WARMUP")
