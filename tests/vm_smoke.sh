#!/bin/sh
# vm_smoke.sh - the VM tier works: tests/vm/vm-run boots Debian's kernel
# under qemu once, and in it (1) the kernel is another than the host's
# (another boot id) and /sys/fs/cgroup is cgroup2 offering the memory, pids
# and cpu controllers, (2) tests/live_core passes there, through the real
# setuid test helper. Root only, as the live tests; SKIP, with vm-run's
# reason, where no VM can be had.
set -u
if [ "${1:-}" = --in-vm ]; then
    status=0
    if [ "$(cat /proc/sys/kernel/random/boot_id)" = "$2" ]; then
        echo "FAIL: the host's kernel, not the VM's"
        status=1
    else
        echo "ok: kernel $(uname -r), not the host's"
    fi
    controllers=$(cat /sys/fs/cgroup/cgroup.controllers 2>/dev/null)
    if [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ]; then
        echo "FAIL: /sys/fs/cgroup is $(stat -f -c %T /sys/fs/cgroup), not cgroup2"
        status=1
    fi
    for c in memory pids cpu; do
        case " $controllers " in
        *" $c "*) ;;
        *) echo "FAIL: no $c controller in /sys/fs/cgroup ($controllers)"; status=1 ;;
        esac
    done
    [ "$status" = 0 ] && echo "ok: cgroup2 on /sys/fs/cgroup: $controllers"
    tests/live_core || status=1
    # Never 77 from here: that is vm-run's, for a host without a VM.
    exit "$status"
fi

exec "$(dirname "$0")/vm/vm-test" "$0" --in-vm "$(cat /proc/sys/kernel/random/boot_id)"
