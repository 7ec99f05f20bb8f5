"""A worker remembers the last Host it found valid (the value as it came):
keep-alive clients send the same one on every request. Hosts of the same
length that differ in one byte, in letter case only, with and without a
port, must each still pick their own server, in turn on one connection, and
a bad one of the same length must still be refused."""
import swsharness as h

# (server_name, the tag its answer starts with)
NAMES = [("aaaa.test", "a4"), ("aaab.test", "b4"), ("a.b", "ab"), ("a.c", "ac"),
         ("abcdefgh1.test", "h1"), ("abcdefgh2.test", "h2"),
         ("abcdefghijklmnopq.test", "long"), ("abcdefghijklmnopr.test", "long2")]

SERVERS = "".join("""
    server {
        listen 127.0.0.1:@PORT@;
        server_name %s;
        location / { return 200 "%s $host\\n"; }
    }
""" % name_tag for name_tag in NAMES)

TURNS = [
    ("aaaa.test", b"a4 aaaa.test\n"),
    ("aaab.test", b"b4 aaab.test\n"),
    ("aaaa.test", b"a4 aaaa.test\n"),
    ("AAAB.test", b"b4 aaab.test\n"),
    ("aaab.test", b"b4 aaab.test\n"),
    ("aaab.test:80", b"b4 aaab.test\n"),
    ("aaaa.test:80", b"a4 aaaa.test\n"),
    ("a.b", b"ab a.b\n"),
    ("a.c", b"ac a.c\n"),
    ("a.b", b"ab a.b\n"),
    ("abcdefgh1.test", b"h1 abcdefgh1.test\n"),
    ("abcdefgh2.test", b"h2 abcdefgh2.test\n"),
    ("abcdefgh1.test", b"h1 abcdefgh1.test\n"),
    ("abcdefghijklmnopq.test", b"long abcdefghijklmnopq.test\n"),
    ("abcdefghijklmnopr.test", b"long2 abcdefghijklmnopr.test\n"),
    ("abcdefghijklmnopq.test", b"long abcdefghijklmnopq.test\n"),
    ("aaaa.test", b"a4 aaaa.test\n"),
]


def test_each_host_its_own_server(sws):
    srv = sws(servers=SERVERS)
    c = h.Conn(srv.port)
    try:
        for host, body in TURNS:
            c.send(b"GET /x HTTP/1.1\r\nHost: %s\r\n\r\n" % host.encode())
            resp = c.read_response()
            assert resp.status == 200, (host, resp.status)
            assert resp.body == body, (host, resp.body)
    finally:
        c.close()


# A bad Host right after a valid one of the same length, the bad byte where
# each part of the memo's comparison looks: still refused (400, and the
# connection closes), never taken for the remembered one.
BAD_AFTER = [
    ("a.b", "a/b"),
    ("aaaa.test", "aaaa/test"),
    ("aaaa.test", "aaa/.test"),
    ("abcdefgh1.test", "abcdefgh/.test"),
    ("abcdefgh1.test", "abcd/fgh1.test"),
    ("abcdefghijklmnopq.test", "abcdefghijklmnop/.test"),
]


def test_bad_host_after_a_remembered_one(sws):
    srv = sws(servers=SERVERS)
    for good, bad in BAD_AFTER:
        c = h.Conn(srv.port)
        try:
            c.send(b"GET /x HTTP/1.1\r\nHost: %s\r\n\r\n" % good.encode())
            assert c.read_response().status == 200, good
            c.send(b"GET /x HTTP/1.1\r\nHost: %s\r\n\r\n" % bad.encode())
            assert c.read_response().status == 400, bad
        finally:
            c.close()
