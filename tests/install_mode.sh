#!/bin/sh
# install_mode.sh - "make install" leaves the helper setuid root and
# runnable by group isospawn only (4754 root:isospawn) when that group
# exists, else by root only (4750 root:root) with a notice; never 4755.
# Installs into a temporary prefix, with ISO_GROUP naming an existing group
# and then a missing one. Root only: the install hook chowns the helper.
set -eu
if [ "$(id -u)" != 0 ]; then
    echo "SKIP: make install chowns the helper only as root"
    exit 77
fi
group=$(getent group | awk -F: '$3 != 0 { print $1; exit }')
tmp=$(mktemp -d /tmp/isospawn-install-mode.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# sh runs the EXIT trap on exit only: a signal (a reader gone, ^C) must
# end in an exit too, or the setuid files made here stay behind.
trap 'exit 1' HUP INT PIPE TERM
status=0
for want in "$group 4754 $group" "isospawn-check-no-such-group 4750 root"; do
    set -- $want
    rm -rf "$tmp/p"
    if ! make install prefix="$tmp/p" sysconfdir="$tmp/p/etc" \
            localstatedir="$tmp/p/var" ISO_GROUP="$1" >"$tmp/log" 2>&1; then
        cat "$tmp/log"
        exit 1
    fi
    helper=$(find "$tmp/p" -name isospawn-helper -type f)
    got=$(stat -c '%a root:%G' "$helper")
    if [ "$(stat -c %U "$helper")" != root ] || [ "$got" != "$2 root:$3" ]; then
        echo "FAIL: with group $1: helper is $(stat -c '%a %U:%G' "$helper"), want $2 root:$3"
        status=1
    else
        echo "ok: with group $1: helper is $got"
    fi
    if [ "$2" = 4750 ] && ! grep -q "notice: group $1 does not exist" "$tmp/log"; then
        echo "FAIL: no notice about the missing group"
        status=1
    fi
done
exit $status
