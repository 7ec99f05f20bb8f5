"""listen on a wildcard and on specific addresses of the same port: one
socket (the wildcard's) unless an address asks for its own ("bind", a
socket option); servers, default server, ssl and http2 per address:port,
chosen by the connection's local address; IPv6; unix sockets unaffected;
the configuration errors.

The wildcard sockets listen on every interface for the few seconds a test
lasts; the clients only ever use loopback addresses (127.0.0.2 is a
loopback address on Linux without any set-up)."""
import os
import socket
import ssl

import pytest

import swsharness as h
import tlsutil

OTHER = "127.0.0.2"

# The template's server (127.0.0.1:@PORT@) says "specific" at /who; these
# go in @SERVERS@.
WILD = """
    server {
        listen @PORT@%s;
        server_name wild.test;
        location = /who { respond 200 "wild"; }
    }
"""


def socket_inodes(pids):
    """The inodes of the sockets the processes pids hold open."""
    inodes = set()
    for pid in pids:
        try:
            fds = os.listdir("/proc/%d/fd" % pid)
        except OSError:
            continue                    # exited meanwhile
        for fd in fds:
            try:
                link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
    return inodes


def listening_sockets(srv, port, v6=False):
    """The number of sockets listening on port (any address) that srv's
    processes hold: another program on the machine may listen on the same
    port with SO_REUSEPORT, and must not count."""
    own = socket_inodes([srv.pid] + srv.children())
    n = 0
    with open("/proc/net/tcp6" if v6 else "/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].split(":")[1], 16) == port \
                    and fields[9] in own:
                n += 1
    return n


def who(port, host=None, addr="127.0.0.1", family=socket.AF_INET):
    with h.Conn(port, host=addr, family=family) as c:
        c.send(h.request("GET", "/who", host=host or "localhost"))
        r = c.read_response()
    assert r.status == 200, r
    return r.body.decode()


def have_other():
    try:
        s = socket.create_connection((OTHER, 9), timeout=0.5)
        s.close()
    except ConnectionRefusedError:
        return True
    except OSError:
        return False
    return True


needs_other = pytest.mark.skipif(not have_other(), reason="no 127.0.0.2 on loopback")


@needs_other
def test_wildcard_and_specific_share_one_socket(sws):
    srv = sws(server='location = /who { respond 200 "specific"; }', servers=WILD % "")
    assert who(srv.port) == "specific"
    assert who(srv.port, addr=OTHER) == "wild"
    # the names of one address are not the other's
    assert who(srv.port, host="wild.test") == "specific"
    assert who(srv.port, addr=OTHER, host="localhost") == "wild"
    assert listening_sockets(srv, srv.port) == 1
    assert "Address already in use" not in srv.error_log()


@needs_other
def test_bind_gives_its_own_socket(sws):
    srv = sws(server='location = /who { respond 200 "specific"; }',
              servers=(WILD % "").replace("listen @PORT@", "listen @PORT@;\n        "
                                   "listen 127.0.0.1:@PORT@ bind"))
    assert listening_sockets(srv, srv.port) == 2
    # the wild server also listens on 127.0.0.1 (after the template's server)
    assert who(srv.port) == "specific"
    assert who(srv.port, host="wild.test") == "wild"
    assert who(srv.port, addr=OTHER) == "wild"


@needs_other
def test_socket_options_imply_bind(sws):
    srv = sws(conf=h.MAIN_TEMPLATE.replace("listen 127.0.0.1:@PORT@;",
                                           "listen 127.0.0.1:@PORT@ backlog=64;"),
              server='location = /who { respond 200 "specific"; }', servers=WILD % "")
    assert listening_sockets(srv, srv.port) == 2
    assert who(srv.port) == "specific"
    assert who(srv.port, addr=OTHER) == "wild"


@needs_other
def test_default_server_per_address(sws):
    servers = """
    server {
        listen @PORT@;
        server_name w1.test;
        location = /who { respond 200 "w1"; }
    }
    server {
        listen *:@PORT@ default_server;
        server_name w2.test;
        location = /who { respond 200 "w2"; }
    }
    server {
        listen 127.0.0.1:@PORT@ default_server;
        server_name s2.test;
        location = /who { respond 200 "s2"; }
    }
    """
    srv = sws(server='location = /who { respond 200 "s1"; }', servers=servers)
    assert listening_sockets(srv, srv.port) == 1
    assert who(srv.port, host="nosuch.test") == "s2"
    assert who(srv.port, host="localhost") == "s1"
    assert who(srv.port, host="w1.test") == "s2"          # not a name of 127.0.0.1
    assert who(srv.port, addr=OTHER, host="nosuch.test") == "w2"
    assert who(srv.port, addr=OTHER, host="w1.test") == "w1"
    assert who(srv.port, addr=OTHER, host="s2.test") == "w2"


@needs_other
def test_ssl_on_the_wildcard_only(sws, pki):
    crt, key = pki.chain("localhost")
    wild = """
    server {
        listen @PORT@ ssl;
        ssl_certificate %s;
        ssl_certificate_key %s;
        location = /who { respond 200 "wild"; }
    }
    """ % (crt, key)
    srv = sws(server='location = /who { respond 200 "specific"; }', servers=wild)
    assert listening_sockets(srv, srv.port) == 1
    assert who(srv.port) == "specific"                    # plain on 127.0.0.1
    ctx = tlsutil.context(pki.ca)
    with socket.create_connection((OTHER, srv.port), timeout=5) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as s:
            s.sendall(h.request("GET", "/who", headers=[("Connection", "close")]))
            data = b""
            while True:
                d = s.recv(4096)
                if not d:
                    break
                data += d
    assert data.startswith(b"HTTP/1.1 200") and data.endswith(b"wild")
    # TLS to 127.0.0.1 meets a plain HTTP server
    with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as raw:
        with pytest.raises(ssl.SSLError):
            ctx.wrap_socket(raw, server_hostname="localhost")


@needs_other
def test_ssl_on_the_specific_address_only(sws, pki):
    crt, key = pki.chain("localhost")
    srv = sws(conf=tlsutil.TLS_TEMPLATE, cert=crt, key=key, listen="",
              server='location = /who { respond 200 "specific"; }', servers=WILD % "")
    assert listening_sockets(srv, srv.port) == 1
    assert who(srv.port, addr=OTHER) == "wild"             # plain on the others
    r, _, _ = tlsutil.get(srv.port, "/who", ctx=tlsutil.context(pki.ca))
    assert r.status == 200 and r.body == b"specific"


@needs_other
def test_http2_per_address(sws):
    srv = sws(server='location = /who { respond 200 "specific"; }',
              servers=WILD % " http2")
    preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
    with h.Conn(srv.port, host=OTHER) as c:
        c.send(preface)
        head = c.read_exact(9)
    assert head[3] == 4                                    # a SETTINGS frame
    with h.Conn(srv.port) as c:
        c.send(preface)
        assert c.read_exact(5) == b"HTTP/"                 # HTTP/1 only here


def test_ipv6_wildcard_and_loopback(sws):
    if not h.have_ipv6():
        pytest.skip("no IPv6")
    servers = """
    server {
        listen [::]:@PORT6@;
        location = /who { respond 200 "wild6"; }
    }
    server {
        listen [::1]:@PORT6@;
        location = /who { respond 200 "loop6"; }
    }
    server {
        listen 127.0.0.1:@PORT6@;
        location = /who { respond 200 "v4"; }
    }
    """
    srv = sws(ipv6=True, servers=servers)
    assert listening_sockets(srv, srv.port6, v6=True) == 1
    assert who(srv.port6, addr="::1", family=socket.AF_INET6) == "loop6"
    assert who(srv.port6) == "v4"                          # the other family: its own


def test_ipv6_bind(sws):
    if not h.have_ipv6():
        pytest.skip("no IPv6")
    servers = """
    server {
        listen [::]:@PORT6@;
        location = /who { respond 200 "wild6"; }
    }
    server {
        listen [::1]:@PORT6@ bind;
        location = /who { respond 200 "loop6"; }
    }
    """
    srv = sws(ipv6=True, servers=servers)
    assert listening_sockets(srv, srv.port6, v6=True) == 2
    assert who(srv.port6, addr="::1", family=socket.AF_INET6) == "loop6"


@needs_other
def test_unix_socket_unaffected(sws, tmp_path):
    servers = WILD % "" + """
    server {
        listen unix:@TMP@/s.sock;
        location = /who { respond 200 "unix"; }
    }
    """
    srv = sws(server='location = /who { respond 200 "specific"; }', servers=servers,
              unix_paths=["@TMP@/s.sock"])
    r = h.curl("http://localhost/who", unix=str(srv.tmp / "s.sock"))
    assert r.status == 200 and r.body == b"unix"
    assert who(srv.port, addr=OTHER) == "wild"


@needs_other
def test_reload_keeps_routing(sws):
    srv = sws(server='location = /who { respond 200 "specific"; }',
              servers=(WILD % "").replace("listen @PORT@", "listen @PORT@;\n        "
                                   "listen 127.0.0.1:@PORT@ bind"))
    old = srv.children()
    assert srv.control("reload").returncode == 0
    assert h.wait_for(lambda: not any(p in srv.children() for p in old), 5)
    assert listening_sockets(srv, srv.port) == 2
    assert who(srv.port) == "specific"
    assert who(srv.port, addr=OTHER) == "wild"


def test_config_errors(tmp_path):
    cases = [
        # the same address written two ways, default in two servers
        ("server { listen @PORT2@ default_server; } "
         "server { listen *:@PORT2@ default_server; }",
         "a duplicate default server for 0.0.0.0:"),
        ("server { listen 127.0.0.1:@PORT2@ default_server; } "
         "server { listen localhost:@PORT2@ default_server; }",
         "a duplicate default server for 127.0.0.1:"),
        ("server { listen [::1]:@PORT2@ default_server; } "
         "server { listen [::1]:@PORT2@ default; }",
         "a duplicate default server for [::1]:"),
        ("server { listen 127.0.0.1:@PORT2@ bind=on; }", 'invalid parameter "bind=on"'),
        # socket options are one listen's, whichever server it is in
        ("server { listen 127.0.0.1:@PORT2@ backlog=10; } "
         "server { listen 127.0.0.1:@PORT2@ reuseport; }",
         "duplicate listen options for 127.0.0.1:"),
        ("server { listen 127.0.0.1:@PORT2@ bind; listen 127.0.0.1:@PORT2@ bind; }",
         "duplicate listen options for 127.0.0.1:"),
    ]
    for i, (servers, needle) in enumerate(cases):
        d = tmp_path / ("c%d" % i)
        d.mkdir()
        rc, out, listening = h.start_expect_failure(d, ports=2, servers=servers)
        assert rc not in (None, 0) and needle in out, (servers, out)
        assert "scalws.conf:" in out.split(needle, 1)[1].split("\n")[0], out
        assert not listening


def test_defaults_on_wildcard_and_specific_are_fine(sws):
    servers = """
    server { listen @PORT2@ default_server; location = /who { respond 200 "w"; } }
    server { listen 127.0.0.1:@PORT2@ default_server; location = /who { respond 200 "s"; } }
    """
    srv = sws(ports=2, servers=servers)
    assert who(srv.ports[1]) == "s"


def test_socket_options_from_a_non_default_server(sws):
    servers = """
    server { listen 127.0.0.1:@PORT2@ default_server; location = /who { respond 200 "d"; } }
    server { listen 127.0.0.1:@PORT2@ reuseport; location = /who { respond 200 "o"; } }
    """
    srv = sws(ports=2, workers=2, servers=servers)
    assert listening_sockets(srv, srv.ports[1]) == 2            # one per worker
    assert who(srv.ports[1]) == "d"
