"""FastCGI on the wire against hand-made peers (a real malformed server is
the thing under test here): what scalwsd sends (BEGIN_REQUEST, PARAMS over
several records, STDIN, FCGI_KEEP_CONN), responses in pieces of any size,
padding, STDERR between STDOUT records, and every malformed record or cut
response: a 502 before the head, a cut response after it (never one that
looks complete), logged."""
import os
import socket
import struct
import threading
import time

import swsharness as h

STDOUT, STDERR, END = 6, 7, 3


def rec(t, content=b"", rid=1, version=1, padding=0):
    return struct.pack(">BBHHBB", version, t, rid, len(content), padding, 0) + content \
        + b"\0" * padding


def end(app=0, proto=0, length=8):
    return rec(END, struct.pack(">IB3x", app, proto)[:length])


def ok(body=b"hello", head=b"Content-Type: text/plain\r\n\r\n"):
    return rec(STDOUT, head + body) + rec(STDOUT) + end()


def decode_pairs(data):
    out, i = {}, 0
    while i < len(data):
        lens = []
        for _ in range(2):
            if data[i] < 128:
                lens.append(data[i])
                i += 1
            else:
                lens.append(struct.unpack(">I", data[i:i + 4])[0] & 0x7fffffff)
                i += 4
        out[data[i:i + lens[0]].decode()] = data[i + lens[0]:i + lens[0] + lens[1]]
        i += lens[0] + lens[1]
    return out


class Peer:
    """A FastCGI server on a unix socket: reads each request's records (up
    to the empty STDIN), records what came, answers with answer(request)
    (bytes, or a list of pieces sent apart), then closes unless keep."""

    def __init__(self, path, answer, keep=False, pieces_delay=0.0, tcp=False):
        self.answer = answer
        self.keep = keep
        self.delay = pieces_delay
        self.requests = []
        self.connections = 0
        if tcp:
            self.ls = socket.socket()
            self.ls.bind(("127.0.0.1", 0))
            self.path = "127.0.0.1:%d" % self.ls.getsockname()[1]
        else:
            self.path = str(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            h.make_traversable(path.parent)
            self.ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.ls.bind(self.path)
            os.chmod(self.path, 0o666)          # the workers may run as nobody
        self.ls.listen(16)
        self.ls.settimeout(0.2)
        self.stop = False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def read_request(self, c, buf):
        req = {"records": [], "params": b"", "stdin": b""}
        while True:
            while len(buf) < 8:
                d = c.recv(65536)
                if not d:
                    return None, buf
                buf += d
            v, t, rid, clen, plen, _ = struct.unpack(">BBHHBB", buf[:8])
            while len(buf) < 8 + clen + plen:
                d = c.recv(65536)
                if not d:
                    return None, buf
                buf += d
            content = buf[8:8 + clen]
            buf = buf[8 + clen + plen:]
            req["records"].append((t, rid, clen))
            if t == 1:
                req["role"], req["flags"] = struct.unpack(">HB", content[:3])
            elif t == 4:
                req["params"] += content
            elif t == 5:
                if clen == 0:
                    req["params"] = decode_pairs(req["params"])
                    return req, buf
                req["stdin"] += content

    def serve(self, c):
        buf = b""
        c.settimeout(5)
        while True:
            req, buf = self.read_request(c, buf)
            if req is None:
                return
            self.requests.append(req)
            a = self.answer(req)
            for piece in (a if isinstance(a, list) else [a]):
                if piece is None:
                    return                # close here
                c.sendall(piece)
                if self.delay:
                    time.sleep(self.delay)
            if not self.keep:
                return

    def run(self):
        while not self.stop:
            try:
                c, _ = self.ls.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.connections += 1
            try:
                self.serve(c)
            except OSError:
                pass
            finally:
                c.close()

    def close(self):
        self.stop = True
        self.t.join(5)
        self.ls.close()


def server(sws, peer, extra="", http=""):
    return sws(server="""
        location / {
            fastcgi_pass %s;
            include %s/conf/fastcgi.conf;
            %s
        }""" % ("unix:" + peer.path if not http else "fcgi", h.SRC, extra), http=http)


def test_what_is_sent(sws, tmp_path):
    p = Peer(tmp_path / "p.sock", lambda r: ok())
    try:
        big = "v" * 70000                          # the PARAMS need two records
        s = server(sws, p, 'fastcgi_param BIG "%s"; fastcgi_param EMPTY "" if_not_empty; '
                           'fastcgi_param X_$request_method "m=$request_method";' % big)
        body = b"b" * 150000
        r = h.curl(s.url("/a/b.php?x=1"), method="POST", body=body,
                   headers=["X-Test: 1", "Content-Type: text/plain"])
        assert r.status == 200 and r.body == b"hello"
        req = p.requests[0]
        assert req["role"] == 1 and req["flags"] == 0      # responder, no KEEP_CONN
        prm = req["params"]
        assert prm["BIG"] == big.encode() and "EMPTY" not in prm
        assert prm["SCRIPT_FILENAME"].endswith(b"/html/a/b.php")
        assert prm["QUERY_STRING"] == b"x=1" and prm["REQUEST_METHOD"] == b"POST"
        assert prm["CONTENT_LENGTH"] == b"150000" and prm["HTTP_X_TEST"] == b"1"
        assert req["stdin"] == body
        params = [c for t, _, c in req["records"] if t == 4]
        assert len(params) == 3 and params[-1] == 0 and max(params) == 65535
        stdin = [c for t, _, c in req["records"] if t == 5]
        assert stdin[-1] == 0 and max(stdin) <= 65535 and sum(stdin) == len(body)
        assert all(rid == 1 for _, rid, _ in req["records"])
    finally:
        p.close()


def test_tcp_address_and_variable_target(sws, tmp_path):
    """fastcgi_pass host:port, and one from a variable."""
    p = Peer(None, lambda r: ok(b"over tcp"), tcp=True)
    try:
        s = sws(server="""
            location /a { fastcgi_pass %s; include %s/conf/fastcgi.conf; }
            location /b { fastcgi_pass $arg_to; include %s/conf/fastcgi.conf; }"""
                       % (p.path, h.SRC, h.SRC))
        assert h.curl(s.url("/a")).body == b"over tcp"
        assert h.curl(s.url("/b?to=" + p.path)).body == b"over tcp"
        assert h.curl(s.url("/b?to=unix:" + str(tmp_path / "none.sock"))).status == 502
        assert h.curl(s.url("/b?to=no.such.host.invalid")).status == 502
    finally:
        p.close()


def test_param_value_with_variable(sws, tmp_path):
    """A value made of a variable alone; names are text (as nginx: only
    values take variables)."""
    p = Peer(tmp_path / "p.sock", lambda r: ok())
    try:
        s = server(sws, p, 'fastcgi_param N "$request_method"; '
                           'fastcgi_param X_$request_method "m=$request_method";')
        assert h.curl(s.url("/x")).status == 200
        assert p.requests[0]["params"]["N"] == b"GET"
        assert p.requests[0]["params"]["X_$request_method"] == b"m=GET"
    finally:
        p.close()


def test_keep_conn(sws, tmp_path):
    p = Peer(tmp_path / "p.sock", lambda r: ok(), keep=True)
    try:
        s = server(sws, p, "fastcgi_keep_conn on;",
                   http="upstream fcgi { server unix:%s; keepalive 4; }" % p.path)
        for _ in range(10):
            assert h.curl(s.url("/x")).body == b"hello"
        assert p.connections == 1 and len(p.requests) == 10
        assert all(r["flags"] == 1 for r in p.requests)
    finally:
        p.close()


def test_response_in_tiny_pieces(sws, tmp_path):
    """Records split anywhere, the head over many records, padding, STDERR
    between STDOUT records: the same response as in one piece."""
    head = b"Status: 201 Created\r\nX-A: 1\r\nContent-Type: text/x\r\n\r\n"
    body = b"".join(b"%05d," % i for i in range(3000))
    stream = b""
    for i in range(0, len(head), 7):
        stream += rec(STDOUT, head[i:i + 7], padding=i % 8)
    stream += rec(STDERR, b"warn one\nwarn ")
    for i in range(0, len(body), 4000):
        stream += rec(STDOUT, body[i:i + 4000], padding=255 if i == 0 else 3)
        if i == 0:
            stream += rec(STDERR, b"two\n")
    stream += rec(STDERR) + rec(STDOUT) + end()
    pieces = [stream[i:i + 13] for i in range(0, 13 * 46, 13)] + [stream[13 * 46:]]
    p = Peer(tmp_path / "p.sock", lambda r: pieces, pieces_delay=0.002)
    try:
        s = server(sws, p)
        r = h.curl(s.url("/x"))
        assert r.status == 201 and r.header("X-A") == "1" and r.body == body
        assert r.header("Content-Type") == "text/x"
        h.wait_file_contains(s.error_log_path, "warn two")
        assert 'FastCGI sent in stderr: "warn one"' in s.error_log()
    finally:
        p.close()


def bad(sws, tmp_path, answer, why, extra=""):
    p = Peer(tmp_path / "p.sock", lambda r: answer)
    try:
        s = server(sws, p, extra)
        r = h.curl(s.url("/x"))
        assert r.status == 502, (why, r)
        h.wait_file_contains(s.error_log_path, why)
    finally:
        p.close()


def test_bad_version(sws, tmp_path):
    bad(sws, tmp_path, rec(STDOUT, b"X: 1\r\n\r\nhi", version=2) + end(),
        "a record of an unknown FastCGI version")


def test_bad_type(sws, tmp_path):
    bad(sws, tmp_path, rec(1, b"\0" * 8) + ok(), "a record of an unexpected type")


def test_bad_request_id(sws, tmp_path):
    bad(sws, tmp_path, rec(STDOUT, b"X: 1\r\n\r\nhi", rid=2) + end(),
        "a record for another request id")


def test_bad_end_request_length(sws, tmp_path):
    bad(sws, tmp_path, rec(END, b"\0" * 4), "an END_REQUEST record whose length is not 8")


def test_overloaded(sws, tmp_path):
    bad(sws, tmp_path, end(proto=2), "END_REQUEST: overloaded")


def test_stdout_after_its_end(sws, tmp_path):
    bad(sws, tmp_path, rec(STDOUT) + rec(STDOUT, b"X: 1\r\n\r\n") + end(),
        "a record on a stream already closed")


def test_output_ends_inside_the_head(sws, tmp_path):
    bad(sws, tmp_path, rec(STDOUT, b"Content-Type: text/plain\r\n") + rec(STDOUT) + end(),
        "the output ended inside the header")


def test_invalid_header_lines(sws, tmp_path):
    for head in (b"Bad Header\r\n\r\n", b"Status: 99 Odd\r\n\r\n", b"Status: abc\r\n\r\n",
                 b": x\r\n\r\n", b"X: a\x01b\r\n\r\n", b"Status: 200\r\nStatus: 201\r\n\r\n"):
        bad(sws, tmp_path / str(len(head)), ok(head=head), "an invalid header line")


def test_head_too_big(sws, tmp_path):
    bad(sws, tmp_path, ok(head=b"X: " + b"a" * 9000 + b"\r\n\r\n"), "sent too big a header")


def test_closed_inside_a_record_before_the_head(sws, tmp_path):
    bad(sws, tmp_path, [rec(STDOUT, b"X: 1\r\n\r\nhello")[:10], None], "closed the connection")


def test_no_answer_read_timeout_504(sws, tmp_path):
    p = Peer(tmp_path / "p.sock", lambda r: [b"", None], pieces_delay=2.0)
    try:
        s = server(sws, p, "fastcgi_read_timeout 300ms;")
        t0 = time.monotonic()
        assert h.curl(s.url("/x")).status == 504
        assert time.monotonic() - t0 < 1.8
        assert "timed out" in s.error_log()
    finally:
        p.close()


def cut(sws, tmp_path, answer, why, delay=0.0):
    """After the head: the client gets a response that cannot look complete
    (chunked without its last chunk, the connection closed)."""
    p = Peer(tmp_path / "p.sock", lambda r: answer, pieces_delay=delay)
    try:
        s = server(sws, p)
        with h.Conn(s.port) as c:
            c.send(b"GET /x HTTP/1.1\r\nHost: localhost\r\n\r\n")
            data = c.read_until_close(timeout=5)
        assert data.startswith(b"HTTP/1.1 200"), data[:200]
        assert b"Transfer-Encoding: chunked" in data
        assert not data.endswith(b"0\r\n\r\n"), data[-50:]
        h.wait_file_contains(s.error_log_path, why)
    finally:
        p.close()


def test_child_dies_mid_record(sws, tmp_path):
    cut(sws, tmp_path, [rec(STDOUT, b"X: 1\r\n\r\n") + rec(STDOUT, b"a" * 1000)[:500], None],
        "closed the connection inside a record")


def test_child_dies_before_end_request(sws, tmp_path):
    cut(sws, tmp_path, [rec(STDOUT, b"X: 1\r\n\r\nsome body") + rec(STDOUT), None],
        "closed the connection before END_REQUEST")


def test_bad_record_in_the_body(sws, tmp_path):
    cut(sws, tmp_path, [rec(STDOUT, b"X: 1\r\n\r\nsome"), rec(STDOUT, b"more", version=9)],
        "a record of an unknown FastCGI version", delay=0.3)


def test_data_after_end_is_not_reused(sws, tmp_path):
    p = Peer(tmp_path / "p.sock", lambda r: ok() + b"junk", keep=True)
    try:
        s = server(sws, p, "fastcgi_keep_conn on;",
                   http="upstream fcgi { server unix:%s; keepalive 4; }" % p.path)
        for _ in range(3):
            assert h.curl(s.url("/x")).body == b"hello"
        assert p.connections == 3
    finally:
        p.close()


def test_refused_502(sws, tmp_path):
    port = h.free_port()
    s = sws(server="location / { fastcgi_pass 127.0.0.1:%d; include %s/conf/fastcgi.conf; }"
                   % (port, h.SRC))
    assert h.curl(s.url("/x")).status == 502
    assert "127.0.0.1:%d" % port in s.error_log()


def test_next_upstream(sws, tmp_path):
    """The first server refuses: the request goes to the next one."""
    p = Peer(tmp_path / "p.sock", lambda r: ok(b"second"))
    try:
        s = server(sws, p, "fastcgi_next_upstream error timeout;",
                   http="upstream fcgi { server unix:%s/none.sock; server unix:%s; }"
                        % (tmp_path, p.path))
        for _ in range(3):
            assert h.curl(s.url("/x")).body == b"second"
    finally:
        p.close()


def test_configuration_errors(tmp_path):
    cases = [
        ("location / { fastcgi_pass unix:/x; fastcgi_pass unix:/y; }", "is duplicate"),
        ("location / { fastcgi_param A b c; }", 'invalid parameter "c"'),
        ('location / { fastcgi_param "" b; }', "has an empty name"),
        ("location / { fastcgi_split_path_info ^(.+)$; }", "two captures"),
        ('location / { fastcgi_split_path_info "(x"; }', "fastcgi_split_path_info"),
        ("location / { fastcgi_param A $nosuchvar; }", "unknown variable"),
        ("location / { fastcgi_pass http://x; }", "takes an address"),
        ("location / { fastcgi_keep_conn maybe; }", "fastcgi_keep_conn"),
        ("location / { fastcgi_buffers 0 4k; }", "fastcgi_buffers"),
    ]
    for i, (conf, needle) in enumerate(cases):
        d = tmp_path / ("c%d" % i)
        rc, out, listening = h.start_expect_failure(d, server=conf)
        assert rc not in (None, 0) and needle in out, (conf, out)
        assert "scalws.conf:" in out, out           # file and line
        assert not listening


def test_server_addr_of_another_loopback_address(sws, tmp_path):
    """SERVER_ADDR is the address the connection came to, written out
    digit by digit (one, two and three digits per byte)."""
    p = Peer(tmp_path / "p.sock", lambda r: ok())
    try:
        s = sws(ports=2, servers="""
            server {
                listen 127.10.200.3:@PORT2@;
                location / { fastcgi_pass unix:%s; include %s/conf/fastcgi.conf; }
            }""" % (p.path, h.SRC))
        assert h.wait_for(lambda: h.port_open(s.ports[1], "127.10.200.3"), 10)
        r = h.curl("http://127.10.200.3:%d/x" % s.ports[1])
        assert r.status == 200
        prm = p.requests[0]["params"]
        assert prm["SERVER_ADDR"] == b"127.10.200.3" and prm["REMOTE_ADDR"] == b"127.0.0.1"
        assert prm["SERVER_PORT"] == str(s.ports[1]).encode()
    finally:
        p.close()
