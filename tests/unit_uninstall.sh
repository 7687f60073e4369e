#!/bin/sh
# unit_uninstall.sh - "make uninstall" removes the default policy it
# installed only while it is unchanged: a policy the administrator edited
# is theirs and stays, as does a drop-in directory that holds drop-ins;
# nothing else is left.
# Installs into a temporary prefix: no privilege needed.
set -eu
tmp=$(mktemp -d /tmp/isospawn-uninstall.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT PIPE TERM
chmod 0755 "$tmp"
conf=$tmp/p/etc/isospawn.conf
dropin=$tmp/p/etc/isospawn.d/50-local.conf
status=0
run() {
    if ! make "$@" prefix="$tmp/p" sysconfdir="$tmp/p/etc" \
            localstatedir="$tmp/p/var" >"$tmp/log" 2>&1; then
        cat "$tmp/log"
        exit 1
    fi
}
check() { # check DESCRIPTION COMMAND...
    what=$1
    shift
    if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; status=1; fi
}

run install
check "make install writes the default policy" test -f "$conf"
run uninstall
check "make uninstall removes the unchanged default" test ! -e "$conf"
check "... and the empty drop-in directory" test ! -e "${dropin%/*}"
left=$(find "$tmp/p" \( -type f -o -type l -o -name 'isospawn*' \) -print)
check "... and no file, nor a directory of its own (the helper's, the Python package's)" \
    test -z "$left"
[ -z "$left" ] || echo "$left"

run install
echo "# edited by the administrator" >>"$conf"
echo "# a drop-in" >"$dropin"
run uninstall
check "make uninstall keeps an edited policy" grep -qx '# edited by the administrator' "$conf"
check "... and says so" grep -q "notice: keeping $conf: it differs from the default" "$tmp/log"
check "... and keeps the drop-ins" test -f "$dropin"
exit $status
