"""HTTP/3 requests with fields of their own (Range, conditionals), which
gtlsclient cannot send: with the build's bench/h3load (the HTTP/3 load
client of bench/, a one-shot client with -n 1), next to SCALWSD or named by
H3LOAD. Skipped where it is not built."""
import os
import re
import subprocess
from pathlib import Path

import pytest

import swsharness as h
import tlsutil as t


def _h3load():
    env = os.environ.get("H3LOAD")
    if env:
        return env
    p = Path(h.SCALWSD).parent / "bench" / "h3load"
    return str(p) if p.exists() else None


H3LOAD = _h3load()
pytestmark = pytest.mark.skipif(H3LOAD is None, reason="bench/h3load is not built")

MTIME = 1577934245          # 2020-01-02 03:04:05 UTC
LM = "Thu, 02 Jan 2020 03:04:05 GMT"
FILES = {"html/range.txt": b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"}


@pytest.fixture(scope="module")
def srv(sws_module, pki):
    s = t.launch(sws_module, pki, files=FILES,
                 server="        listen 127.0.0.1:@PORT@ quic;\n")
    os.utime(s.tmp / "html" / "range.txt", (MTIME, MTIME))
    return s


def h3(srv, path, *headers, tmp):
    out = tmp / "body"
    args = [H3LOAD, "-k", "-n", "1", "-t", "10", "--print", "-o", str(out)]
    for x in headers:
        args += ["-H", x]
    args.append("https://127.0.0.1:%d%s" % (srv.port, path))  # not ::1 (localhost may be)
    r = subprocess.run(args, capture_output=True, timeout=20, stdin=subprocess.DEVNULL)
    fields = {}
    for line in r.stdout.decode("latin-1").splitlines():
        m = re.match(r"^(:?[a-z0-9-]+): (.*)$", line)
        if m and m.group(1) not in fields:
            fields[m.group(1)] = m.group(2)
    body = out.read_bytes() if out.exists() else b""
    return fields, body


def test_range(srv, tmp_path):
    f, body = h3(srv, "/range.txt", "Range: bytes=2-5", tmp=tmp_path)
    assert f.get(":status") == "206", f
    assert f.get("content-range") == "bytes 2-5/36"
    assert body == b"2345"


def test_conditional(srv, tmp_path):
    f, body = h3(srv, "/range.txt", "If-Modified-Since: " + LM, tmp=tmp_path)
    assert f.get(":status") == "304", f
    assert body == b""
    f, _ = h3(srv, "/range.txt", tmp=tmp_path)
    etag = f.get("etag")
    assert etag
    f, body = h3(srv, "/range.txt", "If-None-Match: " + etag, tmp=tmp_path)
    assert f.get(":status") == "304"
    f, body = h3(srv, "/range.txt", "If-None-Match: \"other\"", tmp=tmp_path)
    assert f.get(":status") == "200"
    assert body == FILES["html/range.txt"]
