"""pytest's results in the form make check counts (tests/check-driver):

one "SKIP: what: why" line per skipped test, and a last line in Check's
summary form, "NN%: Checks: N, Failures: F, Errors: E", so that each
pytest test is one result in make check's summary, and a skip is a SKIP
with its reason, never a pass.
"""


def pytest_terminal_summary(terminalreporter):
    stats = terminalreporter.stats
    passed, failed, errors = (len(stats.get(key, []))
                              for key in ("passed", "failed", "error"))
    for report in stats.get("skipped", []):
        reason = report.longrepr
        if isinstance(reason, tuple):
            reason = reason[2]
        reason = str(reason).replace("\n", " ")
        if reason.startswith("Skipped: "):
            reason = reason[len("Skipped: "):]
        terminalreporter.write_line("SKIP: %s: %s" % (report.nodeid, reason))
    total = passed + failed + errors
    terminalreporter.write_line("%d%%: Checks: %d, Failures: %d, Errors: %d" % (
        100 * passed // total if total else 100, total, failed, errors))
