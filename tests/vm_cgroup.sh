#!/bin/sh
# vm_cgroup.sh - each guest in a cgroup v2 leaf of its own, on a kernel
# that has every controller: tests/live_cgroup runs in a VM of Debian's
# kernel (tests/vm/vm-run), whose /sys/fs/cgroup is cgroup2 offering
# memory, pids and cpu, so that the test helper makes its parent there
# (/sys/fs/cgroup/isospawn) and every check of it runs. Root only, as the
# live tests; SKIP, with vm-run's reason, where no VM can be had.
set -u
if [ "${1:-}" = --in-vm ]; then
    # Never 77 from here: that is vm-run's, for a host without a VM.
    tests/live_cgroup || exit 1
    exit 0
fi

exec "$(dirname "$0")/vm/vm-test" "$0" --in-vm
