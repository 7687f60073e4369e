#!/bin/sh
# install_unsafe_dir.sh - "make install", run by root into a prefix that
# someone else may write (a directory of theirs, a world-writable one),
# never lets that someone redirect what root does there: they could swap
# the freshly installed helper, or the directory above it, for a symbolic
# link between the install and the hook's chown and chmod 4754 (which
# follow links), or plant isospawn.conf.tmp as a link before the policy is
# written through it. The hooks make nothing setuid and write no policy
# below a directory that is not root's alone (the helper would refuse to
# run on such a policy anyway). Root only.
set -eu
if [ "$(id -u)" != 0 ]; then
    echo "SKIP: make install chowns the helper only as root"
    exit 77
fi
command -v setpriv >/dev/null || { echo "SKIP: no setpriv to act as another user"; exit 77; }
group=$(getent group | awk -F: '$3 != 0 { print $1; exit }')
tmp=$(mktemp -d /tmp/isospawn-install-unsafe.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# sh runs the EXIT trap on exit only: a signal (a reader gone, ^C) must
# end in an exit too, or the setuid files made here stay behind.
trap 'exit 1' HUP INT PIPE TERM
chmod 0755 "$tmp"
p=$tmp/p
mkdir "$p" && chown 65534:65534 "$p"
for v in victim-helper victim-policy; do
    echo untouched >"$tmp/$v" && chmod 0600 "$tmp/$v"
done
# The owner of the prefix: a link where the policy's temporary file will
# be written, and, once the helper is installed, the directory above it
# swapped for one whose helper is a link.
setpriv --reuid=65534 --regid=65534 --clear-groups sh -c '
    p=$1 tmp=$2
    mkdir -p "$p/etc" && ln -s "$tmp/victim-policy" "$p/etc/isospawn.conf.tmp"
    while [ ! -f "$p/libexec/isospawn/isospawn-helper" ]; do sleep 0.01; done
    mv "$p/libexec" "$p/libexec.old"
    mkdir -p "$p/libexec/isospawn"
    ln -s "$tmp/victim-helper" "$p/libexec/isospawn/isospawn-helper"
' attacker "$p" "$tmp" &
attacker=$!
rc=0
make install prefix="$p" sysconfdir="$p/etc" localstatedir="$p/var" \
    ISO_GROUP="$group" >"$tmp/log" 2>&1 || rc=$?
kill "$attacker" 2>/dev/null || true
wait "$attacker" 2>/dev/null || true
status=0
for v in victim-helper victim-policy; do
    got=$(stat -c '%a %U:%G' "$tmp/$v")
    if [ "$got" != "600 root:root" ] || [ "$(cat "$tmp/$v")" != untouched ]; then
        echo "FAIL: $v, a file the prefix's owner linked to, is now $got: $(head -c 60 "$tmp/$v")"
        status=1
    else
        echo "ok: $v untouched"
    fi
done
setuid=$(find "$p" -perm -4000 2>/dev/null)
if [ -n "$setuid" ]; then
    echo "FAIL: setuid in the prefix: $setuid"
    status=1
fi
# The swap may also land inside install(1)'s own copy-then-chmod, which
# then fails before the hook runs: nothing is made setuid either way.
if grep -q "writable by" "$tmp/log"; then
    echo "ok: make install said why it made nothing setuid"
elif [ "$rc" != 0 ] && grep -q "install: cannot" "$tmp/log"; then
    echo "ok: the swap broke install(1) itself, before the hook"
else
    echo "FAIL: make install did not say why it made nothing setuid:"
    cat "$tmp/log"
    status=1
fi
exit $status
