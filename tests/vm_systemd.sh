#!/bin/sh
# vm_systemd.sh - the setuid helper on a host that systemd runs: in a VM of
# Debian's kernel (tests/vm/vm-run --systemd) whose PID 1 is systemd, with
# isospawn-guests.service as the package installs it, every check of
# tests/live_cgroup runs with the guests' leaves in the cgroup systemd
# delegated to that unit, and its systemd check (the unit's cgroup, never
# one of the helper's own; stopping the unit; without it). Root only, as
# the live tests; SKIP, with vm-run's reason, where no VM can be had.
set -u
if [ "${1:-}" = --in-vm ]; then
    unit=isospawn-guests.service
    # Started alone (nothing of sysinit.target: no host's unit runs).
    mkdir -p "/run/systemd/system/$unit.d" &&
        cp "${ISO_SRCDIR:-..}/systemd/$unit" /run/systemd/system/ &&
        printf '[Unit]\nDefaultDependencies=no\n' >"/run/systemd/system/$unit.d/alone.conf" &&
        systemctl daemon-reload && systemctl start "$unit" || exit 1
    tests/live_cgroup || exit 1
    # Never 77 from here: that is vm-run's, for a host without a VM.
    exit 0
fi

exec "$(dirname "$0")/vm/vm-test" --systemd "$0" --in-vm
