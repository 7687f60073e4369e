#!/bin/sh
# unit_man.sh - every manual page formats without a warning. lintian (run
# by packaging/test-packages) fails the Debian build on groff's warnings,
# such as a table column too narrow for its text; this finds them in
# make check, before a package is built. No privilege needed.
set -u
if ! command -v groff >/dev/null 2>&1; then
    echo "SKIP: groff is not installed (Debian: groff-base)"
    exit 77
fi
status=0
for page in "$(dirname "$0")"/../man/*.[1-8]; do
    # -t: tables through tbl, as man(1) does; -ww: every warning; -z:
    # format, print nothing (groff's default
    # line length, which lintian's check uses too).
    out=$(groff -t -man -Tutf8 -ww -z "$page" 2>&1)
    if [ -n "$out" ]; then
        echo "FAIL: $(basename "$page"):"
        echo "$out"
        status=1
    else
        echo "ok: $(basename "$page")"
    fi
done
exit $status
