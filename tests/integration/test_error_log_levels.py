"""error_log in http, server and location (as nginx): a request's messages go
to the error log of the location it is in, filtered by that log's level,
else its server's, else http's, else the main one; every such log is
reopened on USR1; a bad one is a configuration error naming its line."""
import os
import signal

import conferr
import swsharness as h

MISSING = 'open() "'      # what a request for a missing file logs (error)


def read(path):
    try:
        return path.read_text()
    except OSError:
        return ""


def test_each_level_logs_its_own_requests(sws):
    s = sws(http="error_log @TMP@/http.err;", server="""
        error_log @TMP@/srv.err warn;
        location /loc/ { error_log @TMP@/loc.err info; }
        location /quiet/ { error_log @TMP@/quiet.err crit; }
        location /inherit/ { }
    """)
    assert h.curl(s.url("/nothing-here.txt")).status == 404
    assert h.wait_file_contains(s.tmp / "srv.err", "nothing-here.txt", 3)
    assert h.curl(s.url("/loc/gone.txt")).status == 404
    assert h.wait_file_contains(s.tmp / "loc.err", "gone.txt", 3)
    assert h.curl(s.url("/inherit/x.txt")).status == 404
    assert h.wait_file_contains(s.tmp / "srv.err", "inherit/x.txt", 3)
    assert h.curl(s.url("/quiet/hidden.txt")).status == 404
    # every request logged; now the negatives: each message in one place
    assert h.curl(s.url("/respond")).status == 200
    srv, loc, quiet = (read(s.tmp / n) for n in ("srv.err", "loc.err", "quiet.err"))
    main = s.error_log()
    assert "gone.txt" not in srv and "nothing-here.txt" not in loc
    assert "hidden.txt" not in quiet + srv + loc + main     # below crit
    assert "nothing-here.txt" not in main and "gone.txt" not in main
    assert read(s.tmp / "http.err") == ""                   # the server's own won


def test_http_level_alone(sws):
    s = sws(http="error_log @TMP@/http.err;")
    assert h.curl(s.url("/absent.txt")).status == 404
    assert h.wait_file_contains(s.tmp / "http.err", "absent.txt", 3)
    assert MISSING in read(s.tmp / "http.err")
    assert "absent.txt" not in s.error_log()


def test_usr1_reopens_them(sws):
    s = sws(server="location /loc/ { error_log @TMP@/loc.err; }")
    h.curl(s.url("/loc/one.txt"))
    assert h.wait_file_contains(s.tmp / "loc.err", "one.txt", 3)
    os.rename(s.tmp / "loc.err", s.tmp / "loc.err.1")
    s.signal(signal.SIGUSR1)
    assert h.wait_for(lambda: (s.tmp / "loc.err").exists(), timeout=5)
    # the master reopens (and creates the file) first; the worker reopens
    # its own descriptors at its next loop turn, after it has logged so
    assert h.wait_for(lambda: s.error_log().count("reopening logs") >= 2, timeout=5)
    h.curl(s.url("/loc/two.txt"))
    assert h.wait_file_contains(s.tmp / "loc.err", "two.txt", 3)
    assert "two.txt" not in read(s.tmp / "loc.err.1")


def test_a_bad_level_names_its_line(tmp_path):
    conferr.check(tmp_path, ["error_log", "loud"],
                  server="location /x/ { error_log @TMP@/x.err loud; }  # ERR")
    # several at one level are nginx's (each gets the messages of its level)
    conferr.check_ok(tmp_path / "dup", server="error_log @TMP@/a.err; error_log @TMP@/b.err;")
    conferr.check_ok(tmp_path / "ok", server="location /x/ { error_log @TMP@/x.err debug; }")
