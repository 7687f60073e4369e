#!/bin/sh
# vm_cgroup.sh - each guest in a cgroup v2 leaf of its own, on a kernel
# that has every controller: tests/live_cgroup runs in a VM of Debian's
# kernel (tests/vm/vm-run), whose /sys/fs/cgroup is cgroup2 offering
# memory, pids and cpu, so that the test helper makes its parent there
# (/sys/fs/cgroup/isospawn) and every check of it runs, and the Python
# module's cgroup checks (python/tests/live_python). Root only, as the
# live tests; SKIP, with vm-run's reason, where no VM can be had.
set -u
if [ "${1:-}" = --in-vm ]; then
    status=0
    # The Python module's Status says what the C library's does (its
    # cgroup tests only; a failure fails this script). Then live_cgroup,
    # whose summary line tests/check-driver counts.
    PYTEST_ADDOPTS="-k cgroup" python/tests/live_python
    case $? in
    0) ;;
    77) echo "SKIP: the Python checks: python/tests/live_python skipped (its reason above)" ;;
    *) status=1 ;;
    esac
    tests/live_cgroup || status=1
    # Never 77 from here: that is vm-run's, for a host without a VM.
    exit "$status"
fi

exec "$(dirname "$0")/vm/vm-test" "$0" --in-vm
