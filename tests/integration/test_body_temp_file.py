"""Request bodies beyond client_body_buffer_size go to a temporary file
(client_body_temp_path): proxied bodies arrive intact over HTTP/1.1 and
HTTP/2, with and without a length, and again on a retry; the echo module
answers from the file; client_body_in_file_only keeps or removes the file;
an unusable directory is a 500 with a log line; an aborted upload leaves no
fd behind; a 50 MB upload does not grow the worker's memory."""
import hashlib
import os
import shutil
import socket
import time

import pytest

import echomod
import swsharness as h
import tlsutil as t

BUF = 8192
SIZES = [100, BUF - 1, BUF, BUF + 1, 300 * 1024 + 7]


@pytest.fixture(scope="module")
def echo_load(tmp_path_factory):
    return echomod.build(tmp_path_factory.mktemp("echo"))


def sha(b):
    return hashlib.sha256(b).hexdigest()


def post(url, body, h2=False, chunked=False, timeout=30):
    """POST body with libcurl; chunked: no length (HTTP/1.1 chunks, or
    HTTP/2 DATA frames without content-length). Returns (status, body)."""
    import io
    import pycurl

    c = pycurl.Curl()
    out = io.BytesIO()
    src = io.BytesIO(body)
    c.setopt(pycurl.URL, url)
    c.setopt(pycurl.WRITEDATA, out)
    c.setopt(pycurl.TIMEOUT, timeout)
    c.setopt(pycurl.NOSIGNAL, 1)
    c.setopt(pycurl.HTTP_VERSION, pycurl.CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE if h2
              else pycurl.CURL_HTTP_VERSION_1_1)
    hdrs = ["Expect:"]
    c.setopt(pycurl.POST, 1)
    if chunked:
        c.setopt(pycurl.READFUNCTION, src.read)
        hdrs.append("Transfer-Encoding: chunked")
    else:
        c.setopt(pycurl.POSTFIELDS, body)
    c.setopt(pycurl.HTTPHEADER, hdrs)
    try:
        c.perform()
        return c.getinfo(pycurl.RESPONSE_CODE), out.getvalue()
    finally:
        c.close()


def worker(srv):
    # the port accepts once the master listens, maybe before the fork
    pids = srv.wait_children(1)
    assert len(pids) == 1, pids
    return pids[0]


def fds(pid):
    return h.open_files(pid)


def temp_fds(pid):
    return [f for f in fds(pid) if "client_body_temp" in f]


def vm(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])          # kB
    raise AssertionError(field)


# ------------------------------------------------------------ proxied bodies

@pytest.mark.parametrize("h2", [False, True], ids=["h1", "h2c"])
@pytest.mark.parametrize("chunked", [False, True], ids=["length", "nolength"])
def test_proxied_body_sizes(sws, origin, h2, chunked):
    o = origin()
    srv = sws(server="""http2 on;
        client_body_buffer_size %d;
        location / { proxy_pass http://%s; }""" % (BUF, o.addr))
    for size in SIZES:
        body = os.urandom(size)
        st, _ = post(srv.url("/name"), body, h2=h2, chunked=chunked)
        assert st == 200, (size, srv.diagnostics())
        got = o.last().body
        assert len(got) == size and sha(got) == sha(body), size
    # the unlinked files are closed with their requests
    assert h.wait_for(lambda: temp_fds(worker(srv)) == [], 3)
    assert os.listdir(srv.tmp / "client_body_temp") == []


@pytest.mark.parametrize("chunked", [False, True], ids=["length", "nolength"])
def test_retry_resends_body_from_file(sws, origin, chunked):
    """The first server reads the whole request and closes without an
    answer; the next one must get the same bytes again, from the start."""
    bad = origin("bad")
    bad.drop = True
    good = origin("good")
    srv = sws(http="""upstream b { server %s; server %s; }""" % (bad.addr, good.addr),
              server="""client_body_buffer_size %d;
        location / { proxy_pass http://b;
                     proxy_next_upstream error timeout non_idempotent; }""" % (BUF, ))
    body = os.urandom(700 * 1024 + 3)
    for _ in range(2):                      # round robin: each server first once
        st, got = post(srv.url("/name"), body, chunked=chunked)
        assert st == 200 and got == b"good", srv.diagnostics()
    assert len(bad.requests) >= 1
    assert sha(bad.requests[0].body) == sha(body)
    assert len(good.requests) == 2
    assert all(sha(r.body) == sha(body) for r in good.requests)


def test_retry_after_refused_connect(sws, origin):
    good = origin("good")
    srv = sws(http="upstream b { server 127.0.0.1:%d; server %s; }"
                   % (h.free_port(), good.addr),
              server="""client_body_buffer_size %d;
        location / { proxy_pass http://b; }""" % BUF)
    body = os.urandom(100 * 1024)
    for _ in range(2):
        st, got = post(srv.url("/name"), body)
        assert st == 200 and got == b"good"
    assert all(sha(r.body) == sha(body) for r in good.requests)


def test_body_from_file_over_tls_both_sides(sws, pki, echo_load):
    """HTTP/2 over TLS from the client; the body, in a file, goes to a TLS
    upstream (another scalwsd echoing it, from its own file, over TLS)."""
    back = t.launch(sws, pki, load=echo_load, server="""client_body_buffer_size %d;
        location /e { echo; }""" % BUF)
    front = t.launch(sws, pki, server="""http2 on; client_body_buffer_size %d;
        location / { proxy_pass https://127.0.0.1:%d; }""" % (BUF, back.port))
    for size in (BUF + 1, 400 * 1024 + 5):
        body = os.urandom(size)
        r = h.curl("https://localhost:%d/e" % front.port, method="POST", body=body,
                   http2=True, cainfo=pki.ca)
        assert r.status == 200 and r.http_version == 3, (r, front.diagnostics())
        assert sha(r.body) == sha(body), size


# ------------------------------------------------------------ echo from the file

@pytest.mark.parametrize("h2", [False, True], ids=["h1", "h2c"])
def test_echo_answers_from_file(sws, echo_load, h2):
    srv = sws(load=echo_load, server="""http2 on; client_body_buffer_size %d;
        location /e { echo; }""" % BUF)
    for size in SIZES:
        body = os.urandom(size)
        for chunked in (False, True):
            st, got = post(srv.url("/e"), body, h2=h2, chunked=chunked)
            assert st == 200 and sha(got) == sha(body), (size, chunked)


@pytest.mark.parametrize("h2", [False, True], ids=["h1", "h2c"])
def test_body_copy_sdk_call(sws, echo_load, h2):
    """sws_http_request_body_copy reads the body wherever it is."""
    srv = sws(load=echo_load, server="""http2 on; client_body_buffer_size %d;
        location /c { echo_copy; }
        location /f { client_body_in_file_only clean; echo_copy; }""" % BUF)
    for size in (1, BUF, BUF + 1, 100 * 1024 + 3):
        body = os.urandom(size)
        for path in ("/c", "/f"):
            st, got = post(srv.url(path), body, h2=h2, chunked=size % 2 == 1)
            assert st == 200 and sha(got) == sha(body), (size, path)


def test_in_file_only_on_keeps_file(sws, echo_load):
    srv = sws(load=echo_load, server="""client_body_in_file_only on;
        location /e { echo; }
        location /lv { client_body_temp_path @TMP@/lv 1 2; echo; }""")
    body = b"small body"
    st, got = post(srv.url("/e"), body)
    assert st == 200 and got == body
    files = os.listdir(srv.tmp / "client_body_temp")
    assert len(files) == 1 and len(files[0]) == 10, files
    assert (srv.tmp / "client_body_temp" / files[0]).read_bytes() == body

    big = os.urandom(100 * 1024)
    st, got = post(srv.url("/lv"), big, chunked=True)
    assert st == 200 and got == big
    found = []
    for root, _, names in os.walk(srv.tmp / "lv"):
        found += [os.path.join(root, n) for n in names]
    assert len(found) == 1, found
    name = os.path.basename(found[0])
    rel = os.path.relpath(found[0], srv.tmp / "lv")
    assert rel == "%s/%s/%s" % (name[-1], name[-3:-1], name), rel
    with open(found[0], "rb") as f:
        assert f.read() == big


def test_in_file_only_clean_removes_file(sws, echo_load):
    srv = sws(load=echo_load, server="""client_body_in_file_only clean;
        location /e { echo; }""")
    for body in (b"x", os.urandom(64 * 1024)):
        st, got = post(srv.url("/e"), body)
        assert st == 200 and got == body
    assert h.wait_for(lambda: os.listdir(srv.tmp / "client_body_temp") == [], 3)
    assert temp_fds(worker(srv)) == []


def test_single_buffer_small_body_in_memory(sws, echo_load):
    """client_body_in_single_buffer is accepted; a small body stays in memory."""
    srv = sws(load=echo_load, server="""http2 on; client_body_in_single_buffer on;
        location /e { echo; }""")
    body = os.urandom(5000)
    for h2 in (False, True):
        st, got = post(srv.url("/e"), body, h2=h2, chunked=True)
        assert st == 200 and got == body
    assert temp_fds(worker(srv)) == []


# ------------------------------------------------------------ failures

def test_unusable_temp_dir_is_500(sws, echo_load):
    srv = sws(load=echo_load, server="""client_body_buffer_size %d;
        location /e { echo; }""" % BUF)
    d = srv.tmp / "client_body_temp"
    assert d.is_dir()                       # made by the master at start-up
    shutil.rmtree(d)
    d.write_text("not a directory")
    st, _ = post(srv.url("/e"), os.urandom(BUF * 3))
    assert st == 500
    assert h.wait_file_contains(srv.error_log_path, str(d) + "/")
    log = srv.error_log()
    assert "Not a directory" in log, log
    # still serving: small bodies stay in memory
    st, got = post(srv.url("/e"), b"small")
    assert st == 200 and got == b"small"


def test_start_up_creates_dir_and_refuses_bad_levels(sws, tmp_path):
    srv = sws(http="client_body_temp_path @TMP@/bt 2;",
              server="location /x { client_body_temp_path @TMP@/other; }")
    # made by the master's init_master, which may still run when the port accepts
    assert h.wait_for(lambda: (srv.tmp / "bt").is_dir() and (srv.tmp / "other").is_dir(), 5)
    if os.geteuid() == 0:
        import pwd
        assert (srv.tmp / "bt").stat().st_uid == pwd.getpwnam("nobody").pw_uid
    (tmp_path / "bad").mkdir()
    h.assert_config_errors(tmp_path / "bad", [
        ("client_body_temp_path @TMP@/t 3;", "invalid level"),
        ("client_body_temp_path @TMP@/t 1 1 1 1;", "client_body_temp_path"),
        ("client_body_in_file_only maybe;", "client_body_in_file_only"),
        ("client_body_temp_path @TMP@/t 1; server { listen 127.0.0.1:@PORT@; "
         "client_body_temp_path @TMP@/t 2; }", "different levels"),
    ])


def test_aborted_upload_leaves_no_fd(sws, echo_load):
    srv = sws(load=echo_load, server="""client_body_buffer_size %d;
        location /e { echo; }""" % BUF)
    pid = worker(srv)
    # counted once the worker has served a request (it may still be setting
    # up just after the fork)
    st, _ = post(srv.url("/e"), b"warm")
    assert st == 200
    # the warm-up connection may still be open in the worker (its close is
    # not seen yet): compare sets, each socket's inode is unique
    before = set(fds(pid))
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
    s.sendall(b"POST /e HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000000\r\n\r\n")
    s.sendall(os.urandom(200 * 1024))
    assert h.wait_for(lambda: len(temp_fds(pid)) == 1, 3), fds(pid)
    s.close()
    assert h.wait_for(lambda: temp_fds(pid) == [] and set(fds(pid)) <= before, 3), \
        (before, fds(pid))


def test_large_upload_memory_flat(sws, echo_load):
    srv = sws(load=echo_load, server="""client_max_body_size 100m;
        location /e { echo; }""")
    pid = worker(srv)
    st, got = post(srv.url("/e"), b"warm up" * 1000)
    assert st == 200
    hwm = vm(pid, "VmHWM")
    body = os.urandom(50 * 1024 * 1024)
    t = time.monotonic()
    st, got = post(srv.url("/e"), body, timeout=60)
    assert st == 200 and len(got) == len(body) and sha(got) == sha(body)
    grown = vm(pid, "VmHWM") - hwm
    assert grown < 8 * 1024, (hwm, grown, time.monotonic() - t)   # kB: far below 50 MB
