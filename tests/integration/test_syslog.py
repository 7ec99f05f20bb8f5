"""access_log and error_log to syslog ("syslog:server=...,facility=,
severity=,tag=,nohostname"): the datagrams scalwsd sends are compared byte
for byte with nginx 1.22's for the same configuration (the timestamp and
the host name apart), over UDP and unix datagram sockets; refused forms
name file and line with nginx's words; a receiver that is gone or full
never holds a request up."""
import os
import re
import signal
import socket
import time
from pathlib import Path

import pytest

import conferr
from nginxcheck import nginx_t
import swsharness as h
from test_nginx_sites import NGINX, start_server

HEADER = re.compile(rb"^<(\d+)>([A-Z][a-z]{2} [ 1-3]\d \d\d:\d\d:\d\d) (?:(\S+) )?(\w*): ")
TIME_LOCAL = re.compile(rb"\[\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}\]")
ERR_PREFIX = re.compile(rb"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d \[(\w+)\] \d+#\d+: (?:\*\d+ )?")
HOSTNAME = socket.gethostname().lower().encode()


class Receiver:
    """A syslog server of the test's own: a UDP socket on a free loopback
    port, or a unix datagram socket at a temporary path."""

    def __init__(self, path=None):
        if path:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            self.sock.bind(str(path))
            os.chmod(path, 0o777)          # the workers' user sends to it
            self.addr = "unix:%s" % path
        else:
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.sock.bind(("127.0.0.1", 0))
            self.addr = "127.0.0.1:%d" % self.sock.getsockname()[1]

    def take(self, n, timeout=3.0):
        """n datagrams, or fail."""
        out, deadline = [], time.monotonic() + timeout
        while len(out) < n:
            left = deadline - time.monotonic()
            assert left > 0, "got %d of %d datagrams: %r" % (len(out), n, out)
            self.sock.settimeout(left)
            try:
                out.append(self.sock.recv(65536))
            except socket.timeout:
                pass
        return out

    def rest(self, quiet=0.3):
        """Whatever else comes until the socket has been quiet a while."""
        out = []
        self.sock.settimeout(quiet)
        while True:
            try:
                out.append(self.sock.recv(65536))
            except socket.timeout:
                return out

    def close(self):
        self.sock.close()


def split(msg):
    """(pri, hostname or None, tag, text) of one datagram; the timestamp
    must be RFC 3164's and close to now."""
    m = HEADER.match(msg)
    assert m, msg
    ts = time.strptime(time.strftime("%Y ") + m.group(2).decode().replace("  ", " 0"),
                       "%Y %b %d %H:%M:%S")
    assert abs(time.mktime(ts) - time.time()) < 30, msg
    return int(m.group(1)), m.group(3), m.group(4), msg[m.end():]


def normal(msg):
    """A datagram with the parts that differ between two servers (the
    time, the pid, the server's name in its tag) made equal."""
    pri, host, tag, text = split(msg)
    text = TIME_LOCAL.sub(b"[T]", text)
    text = ERR_PREFIX.sub(lambda m: b"E [" + m.group(1) + b"] ", text)
    return pri, host, tag, text


@pytest.fixture
def both(tmp_path):
    """both(site) starts nginx and scalwsd with the http block's content
    site (@PORT@, @DIR@, @SYSLOG@: each its own receiver's address,
    @SYSLOG2@ a unix one); returns [(port, receiver, receiver2)]."""
    if not os.path.exists(NGINX):
        pytest.fail("nginx is not installed: `sh auto/deps test` installs it")
    running, receivers = [], []

    def start(site):
        out = []
        for who in ("nginx", "scalwsd"):
            d = tmp_path / who
            d.mkdir()
            h.make_traversable(tmp_path)
            r1, r2 = Receiver(), Receiver(d / "dev-log")
            receivers.extend((r1, r2))
            port = h.free_port()
            text = (site.replace("@PORT@", str(port)).replace("@DIR@", str(d))
                    .replace("@SYSLOG@", r1.addr).replace("@SYSLOG2@", r2.addr))
            running.append(start_server(who, d, port, text))
            out.append((port, r1, r2))
        return out

    yield start
    for r in running:
        r.stop()
    for r in receivers:
        r.close()


def get(port, path, headers=()):
    return h.exchange(port, h.request("GET", path, headers=headers))


def test_access_log_udp_same_datagrams_as_nginx(both):
    pair = both("""
    log_format sl '$remote_addr "$request" $status $body_bytes_sent "$http_user_agent"';
    server {
        listen 127.0.0.1:@PORT@;
        access_log syslog:server=@SYSLOG@,facility=local3,severity=notice,tag=web_1 sl;
        access_log syslog:server=@SYSLOG@,facility=kern,severity=emerg,tag=K;
        location / { return 200 "hi\\n"; }
        location /missing { return 404; }
    }
""")
    got = []
    for port, r1, _ in pair:
        for path, ua in (("/a?x=1", "agent/1"), ("/missing", 'quote" and \\ and \xe9')):
            assert get(port, path, [("User-Agent", ua)]).status in (200, 404)
        got.append([normal(m) for m in r1.take(4)] + r1.rest(0.1))
    assert got[0] == got[1]
    (pri, host, tag, text), (pri2, _, tag2, text2) = got[1][:2]
    assert (pri, host, tag) == (19 * 8 + 5, HOSTNAME, b"web_1")    # local3.notice
    assert text == b'127.0.0.1 "GET /a?x=1 HTTP/1.1" 200 3 "agent/1"'
    assert (pri2, tag2) == (0, b"K")       # kern.emerg
    assert text2.startswith(b'127.0.0.1 - - [T] "GET /a?x=1 HTTP/1.1" 200 3 "-" "agent/1"')
    assert got[1][3][3].endswith(b'"quote\\x22 and \\x5C and \\xE9"')


def test_unix_socket_defaults_nohostname_and_if(both):
    """The defaults (local7, info) and nginx's tag; nohostname; if=."""
    pair = both("""
    log_format u '$request_uri $status';
    map $uri $loggable { /skip 0; default 1; }
    server {
        listen 127.0.0.1:@PORT@;
        access_log syslog:server=@SYSLOG2@,nohostname u if=$loggable;
        access_log syslog:server=@SYSLOG@ u;
        location / { return 204; }
    }
""")
    got = []
    for port, r1, r2 in pair:
        for path in ("/one", "/skip", "/two"):
            assert get(port, path).status == 204
        unix = [split(m) for m in r2.take(2)] + r2.rest(0.1)
        udp = [split(m) for m in r1.take(3)]
        got.append((unix, udp))
    (n_unix, n_udp), (s_unix, s_udp) = got
    # nginx's default tag is "nginx", ours "scalws"; the rest is the same
    assert [m[2] for m in n_unix + n_udp] == [b"nginx"] * 5
    assert [m[2] for m in s_unix + s_udp] == [b"scalws"] * 5
    strip = lambda ms: [(pri, host, text) for pri, host, _, text in ms]  # noqa: E731
    assert strip(s_unix) == strip(n_unix) == [(190, None, b"/one 204"), (190, None, b"/two 204")]
    assert strip(s_udp) == strip(n_udp)
    assert [m[1] for m in s_udp] == [HOSTNAME] * 3


def test_error_log_levels_and_severity(both):
    """error_log syslog:... LEVEL: the line as the file has it (time, level,
    pid) after the header, the level as the severity; messages below the
    level are not sent; severity= does not change it."""
    pair = both("""
    server {
        listen 127.0.0.1:@PORT@;
        root @DIR@/nothing;
        error_log syslog:server=@SYSLOG@,tag=err,severity=debug error;
        access_log off;
        location / { }
        location /info { error_log syslog:server=@SYSLOG2@,facility=daemon,nohostname info; }
    }
""")
    got = []
    for port, r1, r2 in pair:
        assert get(port, "/missing.html").status == 404
        assert get(port, "/info/missing.html").status == 404
        one = [normal(m) for m in r1.take(1)] + r1.rest(0.2)
        two = [normal(m) for m in r2.take(1)] + r2.rest(0.2)
        got.append((one, two))
    for one, two in got:
        # nothing below "error" on the first; the second may have info lines after
        assert len(one) == 1, got
        pri, host, tag, text = one[0]
        assert (pri, host, tag) == (23 * 8 + 3, HOSTNAME, b"err"), one
        assert text.startswith(b"E [error] ") and b"missing.html" in text
        assert b"\n" not in text
        pri, host, tag, text = two[0]
        assert (pri, host) == (3 * 8 + 3, None), two
        assert text.startswith(b"E [error] ") and b"missing.html" in text
    # the message words are each server's own; the framing is the same
    (n1, n2), (s1, s2) = got
    assert n1[0][:3] == s1[0][:3] and n2[0][:2] == s2[0][:2]


def test_several_error_logs_at_one_level(sws, tmp_path):
    """A file and syslog at one level, as nginx allows: each gets what its
    own level lets through, the same line."""
    rx = Receiver(tmp_path / "rx.sock")
    try:
        srv = sws(server="""
        error_log syslog:server=%s,tag=e warn;
        error_log @TMP@/srv.err info;
        error_log @TMP@/srv2.err error;
        location /nothing/ { root @TMP@/none; }""" % rx.addr)
        assert get(srv.port, "/nothing/x.html").status == 404
        [m] = rx.take(1)
        pri, _, tag, text = split(m)
        assert (pri, tag) == (187, b"e") and b"[error]" in text and b"x.html" in text
        for f in ("srv.err", "srv2.err"):
            assert h.wait_file_contains(srv.tmp / f, "x.html")
            assert text.decode() + "\n" in (srv.tmp / f).read_text()
        # an info line reaches the info log only
        with h.Conn(srv.port) as c:
            c.send(b"GET / HTTP/1.1\r\nHost: localhost\r\nBad Header\r\n\r\n")
            assert c.read_response().status == 400
        assert h.wait_file_contains(srv.tmp / "srv.err", "invalid header line")
        assert "invalid header line" not in (srv.tmp / "srv2.err").read_text()
        assert all(b"invalid header line" not in m for m in rx.rest(0.2))
    finally:
        rx.close()


def test_main_error_log_every_worker_and_reload(sws, tmp_path):
    """A main-level error_log and an access_log to syslog with two workers:
    each worker sends its own lines; after a reload the new configuration's
    tag is used and nothing is sent to a file named "syslog:..."."""
    rx = Receiver(tmp_path / "rx.sock")
    try:
        conf = h.MAIN_TEMPLATE.replace("error_log @TMP@/error.log @LOGLEVEL@;",
                                       "error_log syslog:server=%s,tag=main notice;" % rx.addr)
        # a reuseport address: the kernel spreads connections over both workers
        srv = sws(conf=conf, workers=2, ports=2,
                  http="log_format pidlog '$pid $request_uri';", servers="""
    server {
        listen 127.0.0.1:@PORT2@ reuseport;
        access_log syslog:server=%s,tag=before pidlog;
        location / { return 204; }
    }""" % rx.addr)
        port = srv.ports[1]
        assert len(srv.wait_children(2)) == 2
        pids = set()
        for i in range(40):
            # read as we go: a unix datagram queue holds only a few
            # (net.unix.max_dgram_qlen), and what does not fit is dropped
            assert get(port, "/n%d" % i).status == 204
            while True:
                pri, _, tag, text = split(rx.take(1)[0])
                if tag == b"before":
                    assert pri == 190 and text.endswith(b" /n%d" % i), text
                    pids.add(text.split()[0])
                    break
        assert len(pids) == 2, "lines of one worker only: %r" % pids
        srv.write_conf(srv.conf_text.replace("tag=before", "tag=after"))
        srv.signal(signal.SIGHUP)
        # the master's notices go to the main error log on syslog
        seen = set()
        deadline = time.monotonic() + 5
        while b"after" not in seen and time.monotonic() < deadline:
            get(port, "/again")
            for m in rx.rest(0.05):
                pri, _, tag, text = split(m)
                seen.add(tag)
                if tag == b"main":
                    assert pri == 23 * 8 + 5 and re.match(ERR_PREFIX, text), m
        assert {b"main", b"after"} <= seen, seen
        assert not list(Path(srv.tmp).glob("syslog*"))
    finally:
        rx.close()


def test_receiver_gone_does_not_stall(sws, tmp_path):
    """Nothing on the UDP port (ECONNREFUSED) and a unix socket that does
    not exist: requests go on at once, the drops are reported in the error
    log, and once the receivers are there the lines arrive again."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    path = tmp_path / "later.sock"
    srv = sws(access_log="syslog:server=127.0.0.1:%d,tag=udp" % port,
              http="access_log syslog:server=unix:%s,tag=unix;" % path)
    with h.Conn(srv.port) as c:
        t0 = time.monotonic()
        for i in range(200):
            c.send(h.request("GET", "/respond?n=%d" % i))
            assert c.read_response().status == 200
        assert time.monotonic() - t0 < 5
    assert h.wait_file_contains(srv.error_log_path, "access log line(s) dropped")
    assert "send() to syslog server \"127.0.0.1:%d\" failed" % port in srv.error_log()
    assert "send() to syslog server \"unix:%s\" failed" % path in srv.error_log()
    udp, unix = Receiver(), None
    udp.sock.close()
    udp.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.sock.bind(("127.0.0.1", port))
    unix = Receiver(path)
    try:
        assert get(srv.port, "/respond?back").status == 200
        for r, tag in ((udp, b"udp"), (unix, b"unix")):
            got = r.take(1)
            while b"/respond?back" not in got[-1]:   # the line of a last request before
                got += r.take(1)
            assert [split(m)[2] for m in got] == [tag] * len(got)
    finally:
        udp.close()
        unix.close()


def test_full_receiver_does_not_block(sws, tmp_path):
    """A unix receiver that never reads: its queue fills and the sends
    that find it full are dropped at once (EAGAIN), not waited for."""
    rx = Receiver(tmp_path / "full.sock")
    try:
        srv = sws(server="access_log syslog:server=%s big;" % rx.addr,
                  http="log_format big '$request_uri %s';" % ("x" * 3000))
        t0 = time.monotonic()
        for k in range(3):              # keepalive_requests is 1000
            with h.Conn(srv.port) as c:
                for i in range(k * 500, k * 500 + 500):
                    c.send(h.request("GET", "/respond?n=%d" % i))
                    assert c.read_response().status == 200
        assert time.monotonic() - t0 < 15
        assert h.wait_file_contains(srv.error_log_path, "access log line(s) dropped")
        got = rx.rest(0.2)
        assert 0 < len(got) < 1500
        assert got[0].startswith(b"<190>") and b"/respond?n=0 xxx" in got[0]
    finally:
        rx.close()


# ---------------------------------------------------------------- refusals

BAD = [
    ("syslog:", 'unknown syslog parameter ""'),
    ("syslog:server=", 'no host in syslog server ""'),
    ("syslog:server=1.2.3.4:0", 'invalid port in syslog server "1.2.3.4:0"'),
    ("syslog:server=1.2.3.4:65536", 'invalid port in syslog server "1.2.3.4:65536"'),
    ("syslog:server=[::1", 'invalid host in syslog server "[::1"'),
    ("syslog:server=[::1]:x", 'invalid port in syslog server "[::1]:x"'),
    ("syslog:server=unix:", 'no path in the unix domain socket in syslog server "unix:"'),
    ("syslog:server=unix:/" + "a" * 120, "too long path in the unix domain socket"),
    ("syslog:server=nonexistent.invalid", 'host not found in syslog server "nonexistent.invalid"'),
    ("syslog:server=1.2.3.4/x", 'invalid host in syslog server "1.2.3.4/x"'),
    ("syslog:server=1.2.3.4,server=1.2.3.5", 'duplicate syslog "server"'),
    ("syslog:server=1.2.3.4,facility=foo", 'unknown syslog facility "foo"'),
    ("syslog:server=1.2.3.4,facility=local7,facility=local7", 'duplicate syslog "facility"'),
    ("syslog:server=1.2.3.4,severity=warning", 'unknown syslog severity "warning"'),
    ("syslog:server=1.2.3.4,severity=info,severity=info", 'duplicate syslog "severity"'),
    ("syslog:server=1.2.3.4,tag=a-b",
     'syslog "tag" only allows alphanumeric characters and underscore'),
    ("syslog:server=1.2.3.4,tag=" + "a" * 33, "syslog tag length exceeds 32"),
    ("syslog:server=1.2.3.4,tag=a,tag=b", 'duplicate syslog "tag"'),
    ("syslog:server=1.2.3.4,foo", 'unknown syslog parameter "foo"'),
    ("syslog:server=1.2.3.4,", 'unknown syslog parameter ""'),
    ("syslog:server=1.2.3.4,nohostname=1", 'unknown syslog parameter "nohostname=1"'),
    ("syslog:facility=local0", "no syslog server specified"),
]
BAD_ACCESS = [
    ("syslog:server=1.2.3.4 combined buffer=4k", "logs to syslog cannot be buffered"),
    ("syslog:server=1.2.3.4 combined flush=1s",
     'no buffer is defined for access_log "syslog:server=1.2.3.4"'),
    ("syslog:server=1.2.3.4 nosuch", 'unknown log format "nosuch"'),
]


def nginx_refusal(tmp, directive):
    """nginx -t's message for the directive in an http block."""
    rc, err = nginx_t(tmp, "    %s;" % directive)
    assert rc != 0, directive
    return err


@pytest.mark.parametrize("directive", ["access_log", "error_log"])
def test_refused_forms_name_file_and_line(tmp_path, directive):
    cases = BAD + (BAD_ACCESS if directive == "access_log" else [])
    for i, (arg, words) in enumerate(cases):
        d = tmp_path / str(i)
        d.mkdir()
        line = "%s %s;" % (directive, arg)
        assert words in nginx_refusal(d, line), (line, words)
        conferr.check(d / "s", [words], http="    %s  # ERR" % line)


def test_accepted_forms(tmp_path):
    good = ["access_log syslog:server=[::1]:514,facility=kern,severity=emerg,tag=a_B9,"
            "nohostname,nohostname combined if=$arg_x",
            "access_log syslog:server=localhost,tag=",
            "access_log syslog:server=unix:/dev/log",
            "error_log syslog:server=127.0.0.1:65535,facility=local0 debug",
            "error_log syslog:server=unix:/dev/log,severity=debug"]
    for i, line in enumerate(good):
        d = tmp_path / str(i)
        d.mkdir()
        conferr.check_ok(d, http="    %s;" % line)
