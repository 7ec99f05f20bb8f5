"""A typical download site (tests/sites/downloads-site.conf) under nginx
and under scalwsd side by side: expiring links (secure_link), links with
the hash in the path (secure_link_secret), a visitor cookie (userid) and
the access log to syslog. The same answers, the same cookie attributes,
and the same log lines over syslog as in the file."""
import base64
import hashlib
import re
import socket
import time

from test_nginx_sites import fetch, pair, same  # noqa: F401 (pair: a fixture)
from test_syslog import Receiver, split

FILES = {"dl/files/tool.tar.gz": b"tool\n" * 20, "dl/files/doc.pdf": b"%PDF-1.4\n",
         "dl/legacy/files/old.zip": b"PK old\n"}


def link(path, expires):
    digest = hashlib.md5(("%d%s s3cr3t" % (expires, path)).encode()).digest()
    return "%s?st=%s&e=%d" % (path, base64.urlsafe_b64encode(digest).rstrip(b"=").decode(),
                              expires)


def test_downloads_site(pair):  # noqa: F811
    rx = Receiver()
    try:
        ports = pair("downloads-site.conf", FILES, extra={"SYSLOG": rx.addr})
        host = ["Host: dl.test"]
        now = int(time.time())
        good = link("/files/tool.tar.gz", now + 600)
        r = same(ports, "GET", good, host)
        assert r.status == 200 and r.body == FILES["dl/files/tool.tar.gz"]
        for path in (link("/files/tool.tar.gz", now - 5),         # expired: 410
                     link("/files/doc.pdf", now + 600).replace("doc", "tool"),
                     "/files/tool.tar.gz", "/files/tool.tar.gz?st=&e=",
                     good.replace("e=", "e=1"), good + "x"):
            same(ports, "GET", path, host, body=False)
        hexd = hashlib.md5(b"old.zipp4ss").hexdigest()
        assert same(ports, "GET", "/p/%s/old.zip" % hexd, host).body == b"PK old\n"
        same(ports, "GET", "/p/%s/new.zip" % hexd, host, body=False)

        # the visitor cookie: the same attributes; nginx's cookie read by
        # both, marked "v" once
        cookies = []
        for port in ports:
            resp, _ = fetch(port, "GET", good, host)
            [c] = resp.headers_all("set-cookie")
            cookies.append(c)
        shapes = [re.sub(r"=[A-Za-z0-9+/]{22}v=;", "=X;", re.sub(r"expires=[^;]+", "E", c))
                  for c in cookies]
        assert shapes[0] == shapes[1] == "visitor=X; E; path=/; httponly; samesite=lax", cookies
        nginx_cookie = cookies[0].split(";")[0]
        again = [fetch(p, "GET", good, host + ["Cookie: " + nginx_cookie])[0] for p in ports]
        assert [a.headers_all("set-cookie") for a in again] == [[], []]

        # the syslog lines of both servers, the same but for the header's time
        lines = {}
        for m in rx.rest(0.5):
            pri, hostname, tag, text = split(m)
            assert (pri, hostname, tag) == (21 * 8 + 6, socket.gethostname().lower().encode(),
                                            b"downloads")
            lines.setdefault(text, 0)
            lines[text] += 1
        assert lines, "no syslog lines"
        assert all(n % 2 == 0 for n in lines.values()), lines     # one of each server
        uid = nginx_cookie.split("=", 1)[1]
        words = base64.b64decode(uid[:22] + "==")
        got = "visitor=" + "".join("%08X" % int.from_bytes(words[i:i + 4], "little")
                                   for i in range(0, 16, 4))
        assert ('127.0.0.1 "GET %s HTTP/1.1" 200 100 "%s"' % (good, got)).encode() in lines
    finally:
        rx.close()
