"""Access logs: combined format, custom formats with variables, escaping,
access_log off, request ids, buffered logs."""
import json
import re
import signal
import time

import pytest

import swsharness as h

TIME_LOCAL = r"\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4}"
COMBINED = re.compile(
    r'^(?P<addr>\S+) - (?P<user>\S+) \[(?P<time>%s)\] "(?P<req>[^"]*)" (?P<status>\d{3}) '
    r'(?P<bytes>\d+) "(?P<ref>(?:[^"\\]|\\.)*)" "(?P<ua>(?:[^"\\]|\\.)*)"$' % TIME_LOCAL)
GENERATED_ID = re.compile(r"^[A-Za-z0-9._-]{16,64}$")


def log_lines(path, needle, timeout=3.0):
    text = h.wait_file_contains(path, needle, timeout)
    assert text, "no line with %r in %s:\n%s" % (needle, path, h._read(path))
    return [ln for ln in text.splitlines() if needle in ln]


# ---------------------------------------------------------------- combined

@pytest.fixture(scope="module")
def srv(sws_module):
    return sws_module(files={"html/hello.txt": b"hello\n"}, server="""
        location = /nolog { access_log off; respond 200 "unlogged"; }
""")


def test_combined_default_format(srv):
    h.curl(srv.url("/respond?x=1"), headers=["Referer: http://ref.example/",
                                             "User-Agent: sws-test-agent/1.0"])
    [line] = log_lines(srv.access_log_path, "/respond?x=1")
    m = COMBINED.match(line)
    assert m, "not a combined-format line: %r" % line
    assert m.group("addr") == "127.0.0.1"
    assert m.group("user") == "-"
    assert m.group("req") == "GET /respond?x=1 HTTP/1.1"
    assert m.group("status") == "200"
    assert m.group("bytes") == "13"
    assert m.group("ref") == "http://ref.example/"
    assert m.group("ua") == "sws-test-agent/1.0"


def test_combined_missing_referer_is_dash(srv):
    h.curl(srv.url("/respond?noref"), headers=["User-Agent: ua-x"])
    [line] = log_lines(srv.access_log_path, "/respond?noref")
    m = COMBINED.match(line)
    assert m and m.group("ref") == "-", line


def test_combined_status_and_bytes_404_and_head(srv):
    h.curl(srv.url("/missing?404"))
    h.curl(srv.url("/respond?head"), method="HEAD")
    [l404] = log_lines(srv.access_log_path, "/missing?404")
    m = COMBINED.match(l404)
    assert m and m.group("status") == "404" and int(m.group("bytes")) > 0, l404
    [lhead] = log_lines(srv.access_log_path, "/respond?head")
    m = COMBINED.match(lhead)
    assert m and m.group("req").startswith("HEAD ") and m.group("bytes") == "0", lhead


def test_combined_escapes_quotes(srv):
    h.curl(srv.url("/respond?esc"), headers=['User-Agent: evil" "injected\\'])
    [line] = log_lines(srv.access_log_path, "/respond?esc")
    m = COMBINED.match(line)
    assert m, "a quote in the User-Agent broke the line: %r" % line
    assert "injected" in m.group("ua"), line


def test_bad_request_is_logged(srv):
    h.exchange(srv.port, b"GET /bad req HTTP/1.1\r\nHost: x\r\n\r\n")
    h.curl(srv.url("/respond?after-bad"))
    text = h.wait_file_contains(srv.access_log_path, "/respond?after-bad")
    assert text and re.search(r'" 400 \d+ ', text), text


def test_access_log_off(srv):
    h.curl(srv.url("/nolog?marker1"))
    h.curl(srv.url("/respond?marker2"))
    text = h.wait_file_contains(srv.access_log_path, "/respond?marker2")
    assert text, "logged request missing"
    assert "marker1" not in text


def test_static_file_logged_bytes(srv):
    h.curl(srv.url("/hello.txt?static"))
    [line] = log_lines(srv.access_log_path, "/hello.txt?static")
    m = COMBINED.match(line)
    assert m and m.group("status") == "200" and m.group("bytes") == "6", line


# ---------------------------------------------------------------- custom, json

JSON_FORMAT = (
    "    log_format j escape=json '{\"remote_addr\":\"$remote_addr\",\"request\":\"$request\","
    "\"status\":$status,\"bytes\":$body_bytes_sent,\"referer\":\"$http_referer\","
    "\"ua\":\"$http_user_agent\",\"rt\":\"$request_time\",\"rid\":\"$request_id\","
    "\"time\":\"$time_local\",\"method\":\"$request_method\",\"ruri\":\"$request_uri\","
    "\"uri\":\"$uri\",\"host\":\"$host\"}';\n"
    "    log_format plain '$request_method|$uri|$status|$host|$request_id';\n"
    "    request_id on;\n")


@pytest.fixture(scope="module")
def jsrv(sws_module):
    return sws_module(http=JSON_FORMAT, server="""
        access_log @TMP@/j.log j;
        location = /plain { access_log @TMP@/plain.log plain; respond 200 "p"; }
""")


def test_json_log_format_variables(jsrv):
    r = h.curl(jsrv.url("/res%70ond?a=1&b=2"),
               headers=["Referer: http://r.example/x", "User-Agent: agent/2"])
    assert r.status == 200
    [line] = log_lines(jsrv.tmp / "j.log", "a=1&b=2")
    d = json.loads(line)
    assert d["remote_addr"] == "127.0.0.1"
    assert d["request"] == "GET /res%70ond?a=1&b=2 HTTP/1.1"
    assert d["status"] == 200
    assert d["bytes"] == 13
    assert d["referer"] == "http://r.example/x"
    assert d["ua"] == "agent/2"
    assert re.match(r"^\d+\.\d{3}$", d["rt"]), d
    assert d["rid"] == r.header("X-Request-Id"), (d, r)
    assert re.match("^%s$" % TIME_LOCAL, d["time"]), d
    assert d["method"] == "GET"
    assert d["ruri"] == "/res%70ond?a=1&b=2"
    assert d["uri"] == "/respond"
    assert d["host"] == "127.0.0.1"          # libcurl sends Host: 127.0.0.1:PORT


def test_json_escaping(jsrv):
    ua = 'quote" backslash\\ tab\t end'
    h.curl(jsrv.url("/respond?jesc"), headers=["User-Agent: " + ua])
    [line] = log_lines(jsrv.tmp / "j.log", "jesc")
    d = json.loads(line)
    assert d["ua"] == ua, d


def test_plain_format_in_location(jsrv):
    h.curl(jsrv.url("/plain"), headers=["Host: Some.Host:1234"])
    [line] = log_lines(jsrv.tmp / "plain.log", "/plain")
    parts = line.split("|")
    assert parts[:4] == ["GET", "/plain", "200", "some.host"], line
    assert GENERATED_ID.match(parts[4]), line


# ---------------------------------------------------------------- request id

def test_request_id_added(jsrv):
    r1 = h.curl(jsrv.url("/respond"))
    r2 = h.curl(jsrv.url("/respond"))
    a, b = r1.header("X-Request-Id"), r2.header("X-Request-Id")
    assert a and GENERATED_ID.match(a), r1
    assert b and a != b, (a, b)


def test_request_id_on_error_responses(jsrv):
    r = h.curl(jsrv.url("/missing"))
    assert r.status == 404 and r.header("X-Request-Id"), r


def test_request_id_well_formed_kept(jsrv):
    rid = "0123456789abcdef0123456789abcdef"
    r = h.curl(jsrv.url("/respond?keep"), headers=["X-Request-Id: " + rid])
    assert r.header("X-Request-Id") == rid, r
    [line] = log_lines(jsrv.tmp / "j.log", "keep")
    assert json.loads(line)["rid"] == rid


@pytest.mark.parametrize("bad", ["has spaces in it", "a" * 300, "semi;colon", "<script>"])
def test_request_id_malformed_replaced(jsrv, bad):
    tag = "repl%d" % len(bad)
    r = h.curl(jsrv.url("/respond?" + tag), headers=["X-Request-Id: " + bad])
    got = r.header("X-Request-Id")
    assert got and got != bad and GENERATED_ID.match(got), r
    lines = log_lines(jsrv.tmp / "j.log", tag)
    assert json.loads(lines[-1])["rid"] == got


def test_request_id_off_by_default(sws):
    s = sws()
    r = h.curl(s.url("/respond"))
    assert r.header("X-Request-Id") is None, r


# ---------------------------------------------------------------- buffered

BUFFERED = "        access_log @TMP@/buf.log combined buffer=64k flush=60s;\n"


@pytest.mark.parametrize("sig", [signal.SIGQUIT, signal.SIGTERM], ids=["QUIT", "TERM"])
def test_buffered_log_flushed_at_exit(sws, sig):
    s = sws(server=BUFFERED)
    h.curl(s.url("/respond?buffered"))
    time.sleep(0.2)
    s.signal(sig)
    assert s.wait_exit(5) is not None
    text = h._read(s.tmp / "buf.log")
    assert "/respond?buffered" in text, "buffered line lost at exit: %r" % text


def test_buffered_log_flushed_on_timer(sws):
    s = sws(server="        access_log @TMP@/buf.log combined buffer=64k flush=1s;\n")
    h.curl(s.url("/respond?timer"))
    assert h.wait_file_contains(s.tmp / "buf.log", "/respond?timer", 4), \
        "buffered line not flushed within 4 s with flush=1s"


def test_buffered_log_flushed_when_buffer_full(sws):
    s = sws(server="        access_log @TMP@/buf.log combined buffer=4k flush=60s;\n")
    for i in range(60):
        h.curl(s.url("/respond?fill-%d-%s" % (i, "x" * 50)))
    assert h.wait_file_contains(s.tmp / "buf.log", "fill-0-", 3), "4k buffer never written"


def test_buffered_log_flushed_on_reload(sws):
    s = sws(server=BUFFERED)
    h.curl(s.url("/respond?reload"))
    s.signal(signal.SIGHUP)
    assert h.wait_file_contains(s.tmp / "buf.log", "/respond?reload", 5), \
        "buffered line lost when the old worker exited on reload"


def test_access_log_if(sws):
    # if=: no line when the condition is empty or "0" (nginx's health-check
    # pattern with a map)
    s = sws(http="""
        map $uri $loggable { /health 0; default 1; }
        log_format bare '$request_uri';
    """, server="""
        access_log @TMP@/if.log bare if=$loggable;
        access_log @TMP@/arg.log bare if=$arg_log;
        location / { respond 200 "x"; }
    """)
    for p in ("/health", "/page", "/other?log=1", "/zero?log=0"):
        assert h.curl(s.url(p)).status == 200
    text = h.wait_file_contains(s.tmp / "if.log", "/zero?log=0", 5)
    assert text.split() == ["/page", "/other?log=1", "/zero?log=0"], text
    text = h.wait_file_contains(s.tmp / "arg.log", "/other?log=1", 5)
    assert text.split() == ["/other?log=1"], text


@pytest.mark.parametrize("line,ok", [
    ("open_log_file_cache max=1000 inactive=20s valid=1m min_uses=2;", True),
    ("open_log_file_cache off;", True),
    ("open_log_file_cache inactive=20s;", False),
    ("open_log_file_cache max=0;", False),
    ("open_log_file_cache max=10 sometimes;", False),
    ("access_log logs/x.log combined if=;", False),
])
def test_open_log_file_cache_and_if_parameters(tmp_path, line, ok):
    import conferr
    if ok:
        conferr.check_ok(tmp_path, server="        %s\n" % line)
    else:
        conferr.check(tmp_path, [line.split()[0]], server="        %s  # ERR\n" % line)
