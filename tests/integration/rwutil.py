"""Configuration errors of the rewrite and map modules, checked with the
line of the directive that has them (the line is found in the file)."""
from pathlib import Path

import swsharness as h


def assert_errors_at(tmp, cases, **kw):
    """cases: (http block, message, marker): the server must refuse to
    start with message in its output, at the line of the configuration
    that contains marker."""
    for i, (http, needle, marker) in enumerate(cases):
        d = Path(tmp) / ("e%d" % i)
        d.mkdir()
        rc, out, listening = h.start_expect_failure(d, http=http, **kw)
        assert rc not in (None, 0) and not listening, (http, out)
        lines = (d / "scalws.conf").read_text().split("\n")
        line = next(n for n, text in enumerate(lines, 1) if marker in text)
        assert needle in out, (http, needle, out)
        assert "scalws.conf:%d" % line in out, (http, line, out)
