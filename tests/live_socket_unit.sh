#!/bin/sh
# live_socket_unit.sh - isospawn.socket, as shipped, stays open under a
# burst of connections. systemd puts an Accept=yes socket that is
# triggered more than TriggerLimitBurst= times (200) within
# TriggerLimitIntervalSec= (2 s) into a failed state, closed until an
# administrator restarts it: any member of group isospawn would shut it
# for every caller (and callers with no_new_privs have no other way in)
# with 200 connects (SECURITY.md 29).
#
# Runs the unit's [Socket] section, its path changed, in a systemd user
# manager of its own (a private mount namespace with a /run of its own, a
# cgroup v2 directory of its own), in front of a stand-in service that
# exits at once: what is tested is what systemd does with the socket, not
# the helper. Root only, for the mount namespace and the cgroup.
set -u
skip() {
    echo "SKIP: $*"
    exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (a mount namespace and a cgroup of its own)"
systemd=
for s in /lib/systemd/systemd /usr/lib/systemd/systemd; do
    [ -x "$s" ] && systemd=$s && break
done
[ -n "$systemd" ] || skip "no systemd binary"
command -v systemctl >/dev/null || skip "no systemctl"
command -v unshare >/dev/null || skip "no unshare"
python=${PYTHON:-python3}
command -v "$python" >/dev/null || skip "no $python to connect with"
cgroot=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$cgroot" ] || skip "no cgroup v2 hierarchy"
unit=$(dirname "$0")/../systemd/isospawn.socket.in

tmp=$(mktemp -d /tmp/isospawn-socket-unit.XXXXXX)
cg=$cgroot/$(basename "$tmp")
mkdir "$cg" 2>/dev/null || { rm -rf "$tmp"; skip "cannot make a cgroup in $cgroot (read-only?)"; }
trap 'find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null; rm -rf "$tmp"' EXIT
# sh runs the EXIT trap on exit only: a signal (a reader gone, ^C) must
# end in an exit too, or the cgroup and the files made here stay behind.
trap 'exit 1' HUP INT PIPE TERM
mkdir -p "$tmp/run" "$tmp/config/systemd/user"
chmod 0700 "$tmp/run"
# The [Socket] section as shipped, listening in $tmp; no [Install].
# systemd does not start a socket whose SocketGroup= does not exist (the
# packages make group isospawn, a bare machine may lack it): then root's
# group stands in, which the trigger limit tested here does not depend on.
group=isospawn
getent group "$group" >/dev/null || group=root
sed -n '/^\[Socket\]/,/^\[Install\]/p' "$unit" | grep -v '^\[Install\]' |
    sed -e "s|^ListenSequentialPacket=.*|ListenSequentialPacket=$tmp/sock|" \
        -e "s|^SocketGroup=isospawn\$|SocketGroup=$group|" \
    >"$tmp/config/systemd/user/isospawn.socket"
printf '[Service]\nExecStart=/bin/true\nCollectMode=inactive-or-failed\n' \
    >"$tmp/config/systemd/user/isospawn@.service"

cat >"$tmp/inside" <<EOF
set -u
mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/system || exit 1
echo \$\$ >"$cg/cgroup.procs" || exit 1
export XDG_RUNTIME_DIR="$tmp/run" XDG_CONFIG_HOME="$tmp/config"
# --unit: the socket alone, not default.target (nor the user units a
# desktop enables).
"$systemd" --user --unit=isospawn.socket >"$tmp/manager.log" 2>&1 &
manager=\$!
for i in \$(seq 50); do
    systemctl --user show-environment >/dev/null 2>&1 && break
    sleep 0.1
done
if ! systemctl --user show-environment >/dev/null 2>&1; then
    echo "SKIP: systemd --user does not run here: \$(tail -n 1 "$tmp/manager.log")"
    kill \$manager 2>/dev/null
    wait \$manager 2>/dev/null
    exit 77
fi
status=0
if ! systemctl --user start isospawn.socket; then
    echo "FAIL: isospawn.socket did not start"
    status=1
else
    "$python" -c '
import socket, sys
for i in range(300):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    s.close()
' "$tmp/sock" || status=1
    sleep 3
    state=\$(systemctl --user is-active isospawn.socket)
    if [ "\$state" = active ]; then
        echo "ok: isospawn.socket is still active after 300 connections in a burst"
    else
        echo "FAIL: isospawn.socket is \$state after 300 connections in a burst:"
        systemctl --user status --no-pager isospawn.socket 2>&1 | sed 's/^/  /'
        status=1
    fi
fi
systemctl --user exit 2>/dev/null
for i in \$(seq 50); do
    kill -0 \$manager 2>/dev/null || break
    sleep 0.1
done
kill \$manager 2>/dev/null
wait \$manager 2>/dev/null
exit \$status
EOF
unshare -m --propagation private sh "$tmp/inside"
