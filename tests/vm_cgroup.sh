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

if [ "$(id -u)" != 0 ]; then
    echo "SKIP: the VM tier runs as root: qemu keeps the owners of the files made in the VM"
    exit 77
fi
err=$(mktemp) || exit 99
trap 'rm -f "$err"' EXIT
trap 'exit 1' HUP INT PIPE TERM
start=$(date +%s)
# The VM hides the host's /tmp: lend the sources too when they are out of
# the build tree (make distcheck builds under /tmp).
src=$(cd "$(dirname "$0")/.." && pwd -P)
set -- --rw "$PWD" --timeout 600
case $src/ in
"$(pwd -P)"/*) ;;
*) set -- --rw "$src" "$@" ;;
esac
# The suite keeps the VM's initramfs in the build tree (Makefile.am).
[ -n "${VM_CACHE:-}" ] && set -- "$@" --cache "$VM_CACHE"
"$(dirname "$0")/vm/vm-run" "$@" -- sh "$0" --in-vm 2>"$err"
status=$?
cat "$err"
if [ "$status" = 77 ]; then
    echo "SKIP: $(tail -n 1 "$err")"
    exit 77
fi
echo "vm_cgroup: $(($(date +%s) - start)) s, boot included"
exit "$status"
