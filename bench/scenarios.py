"""The scenario table.

A scenario is: the path wrk asks for, what a correct answer looks like, a
configuration fragment per server (a file bench/configs/SERVER/NAME.frag, or
"" for none: the base configuration already serves the document root), the
load tool that drives it, and optionally a backend the harness starts first.

A server missing from `fragments` does not run the scenario; `not_applicable`
says why (printed in the report as "n/a").

The backends and load tools are looked up by name in run.py (BACKENDS,
LOAD_TOOLS); adding one is a function there plus the rows here.
"""

from dataclasses import dataclass, field
from typing import Dict, Optional, Tuple

# The document root every scenario shares (made by the harness in its temp dir).
HELLO = b"Hello, world!"
ONE_MIB = 1024 * 1024
PAGE_SIZE = 100 * 1024          # page.html, the compression scenarios' page


def page_html():
    """A 100 KiB HTML page (page.html): markup and varied text, the same
    bytes on every run (a fixed seed), compressing about 4:1 with gzip -1
    as real pages do."""
    import random
    rnd = random.Random(15)
    words = ("the of and to in is for on that with as by this from at are be or an "
             "server request response header body cache proxy compress gzip brotli "
             "worker event loop buffer chain filter module location static file "
             "connection timeout keepalive stream window frame data length").split()
    out = [b"<!DOCTYPE html>\n<html><head><title>ScalWS bench page</title></head><body>\n"]
    size = len(out[0])
    i = 0
    while size < PAGE_SIZE:
        text = " ".join(rnd.choice(words) for _ in range(rnd.randint(20, 60)))
        line = ('<div class="item-%d"><h3>Item %d</h3><p>%s.</p><a href="/items/%d">more</a>'
                "</div>\n" % (i % 7, i, text.capitalize(), rnd.randint(1, 99999))).encode()
        out.append(line)
        size += len(line)
        i += 1
    return b"".join(out)[:PAGE_SIZE - 15] + b"</body></html>\n"


@dataclass(frozen=True)
class Scenario:
    name: str
    path: str
    description: str
    expect_status: int
    expect_length: int                      # body length of a correct answer
    fragments: Dict[str, str]               # server -> fragment name ("" = none)
    not_applicable: Dict[str, str] = field(default_factory=dict)  # server -> why
    load_tool: str = "wrk"
    scheme: str = "http"
    # listen with TLS (and HTTP/2 where the server needs it said): the
    # harness makes an ECDSA P-256 certificate (@CERT@, @KEY@) and every
    # server's base template turns TLS on for its listener (see servers.py)
    tls: bool = False
    backend: Optional[str] = None
    # request counts of the two callgrind runs: (N2 - N1) requests are what
    # the instructions-per-request figure is taken over
    callgrind_counts: Tuple[int, int] = (2000, 6000)
    # header lines every request carries (wrk -H, the exact-count client)
    request_headers: Tuple[str, ...] = ()
    # the Content-Encoding a correct answer has; its length is then that
    # of the encoded body, which differs by server (expect_length -1: any)
    expect_encoding: Optional[str] = None
    # wrk's connections when not --connections (a slow page: fewer, so
    # that answers come within wrk's timeout)
    connections: Optional[int] = None
    # measured beside the floor whatever --servers says (the cache
    # scenarios: issue 26 wants their report to show the floor every time)
    with_floor: bool = False


# the web servers compared; "floor" (bench/floor.c) is a reference beside
# them: one fixed response per request, the kernel's cost and little else.
# Caddy (Debian's 2.6, Go) serves HTTPS only in the bench: the TLS and
# HTTP/3 scenarios, beside the others there.
WEB_SERVERS = ("scalwsd", "nginx", "h2o", "lighttpd")
ALL_SERVERS = WEB_SERVERS + ("caddy", "floor")


def _everyone(fragment: str) -> Dict[str, str]:
    return {s: fragment for s in WEB_SERVERS}


# The TLS fragment: certificate and session cache (h2o: in its listen block,
# from the base template; its session cache and tickets are on by default).
_TLS = {"scalwsd": "tls", "nginx": "tls", "h2o": "", "lighttpd": "tls", "caddy": ""}

# HTTP/3: scalwsd's QUIC listener beside its TLS one on the same port
# number (bench/configs/scalwsd/h3.frag); Caddy serves HTTP/3 on its HTTPS
# port by default. Debian's nginx 1.22 and h2o 2.2 have no HTTP/3, nor has
# lighttpd 1.4.
# node-unix, python-unix: the application on a unix socket, scalwsd and nginx
_UNIX_NA = {s: "not configured (the unix-socket variants compare scalwsd with nginx; "
               "node and python have every server)" for s in ("h2o", "lighttpd")}

_NO_H3 = "no HTTP/3 in Debian 12's build"
_H3_NA = {"nginx": _NO_H3, "h2o": _NO_H3, "lighttpd": _NO_H3}

SCENARIOS = [
    Scenario(
        name="static-small",
        path="/hello.txt",
        description="small static file: GET /hello.txt (13 bytes), HTTP/1.1 keep-alive",
        expect_status=200,
        expect_length=len(HELLO),
        fragments=dict(_everyone(""), floor="small"),
    ),
    Scenario(
        name="static-1m",
        path="/1m.bin",
        description="1 MiB static file: GET /1m.bin (1 MiB of random bytes)",
        expect_status=200,
        expect_length=ONE_MIB,
        fragments=_everyone(""),
        callgrind_counts=(300, 900),
    ),
    Scenario(
        name="respond",
        path="/respond",
        description='fixed response: GET /respond, "Hello, world!" (13 bytes) from '
                    "the configuration, no file",
        expect_status=200,
        expect_length=len(HELLO),
        # h2o: an mruby handler (Debian's h2o is built with mruby);
        # lighttpd: mod_magnet with a 3-line Lua script (lighttpd-modules-lua).
        # Neither has a native fixed-response directive like nginx's return:
        # both run a small script per request.
        fragments=_everyone("respond"),
    ),
    Scenario(
        name="proxy",
        path="/api/x",
        description='reverse proxy: GET /api/x passed to the same origin by every server '
                    '(Debian\'s nginx answering "Hello, world!", 13 bytes, from its configuration, '
                    "one process on the client's CPU), upstream keep-alive wherever the server "
                    "has it, X-Forwarded-For and X-Forwarded-Proto sent to the origin",
        expect_status=200,
        expect_length=len(HELLO),
        # fragments proxy.frag (and proxy.http.frag: the upstream block) in
        # bench/configs/SERVER; the origin's port is @ORIGIN_PORT@.
        # lighttpd 1.4's mod_proxy has no upstream keep-alive: one connection
        # to the origin per request.
        fragments=_everyone("proxy"),
        backend="origin",
    ),
    Scenario(
        name="php",
        path="/hello.php",
        description="PHP: GET /hello.php (echo \"Hello, world!\", 13 bytes) through each "
                    "server's documented PHP location (try_files $uri =404, fastcgi.conf; "
                    "lighttpd: check-local) to the same PHP-FPM pool (8 static children, "
                    "opcache on, on the client's CPU); FastCGI connections kept by scalwsd "
                    "(max_conns 8 with a queue), one per request for nginx, h2o and lighttpd "
                    "(bench/README.md: why)",
        expect_status=200,
        expect_length=len(HELLO),
        # fragments php.frag and php.http.frag (the upstream block); why each
        # server keeps FastCGI connections or not: bench/README.md
        fragments=_everyone("php"),
        backend="php-fpm",
    ),
    Scenario(
        name="wordpress",
        path="/",
        description="WordPress: GET / (the home page of Debian's WordPress, installed by "
                    "the integration tests' script, on a private MariaDB) through each "
                    "server's WordPress configuration (try_files $uri $uri/ /index.php?$args) "
                    "to the php scenario's PHP-FPM pool; MariaDB and PHP-FPM on the client's "
                    "CPU, 8 connections (one per child: a page takes tens of milliseconds of PHP)",
        expect_status=200,
        expect_length=-1,                   # the page's own length, > 0
        # fragments wordpress.frag and wordpress.http.frag; h2o would need
        # an mruby handler for try_files (its "/" serves the document root)
        fragments={"scalwsd": "wordpress", "nginx": "wordpress", "lighttpd": "wordpress"},
        not_applicable={"h2o": "not configured (try_files needs an mruby handler in h2o)"},
        backend="wordpress",
        connections=8,
        callgrind_counts=(50, 150),
    ),
    Scenario(
        name="node",
        path="/app/x",
        description='Node.js application: GET /app/x passed by every server to the same '
                    'Node.js http-module app ("Hello, world!", 13 bytes; one process on the '
                    "client's CPU), upstream keep-alive wherever the server has it; the app's "
                    "own CPU per request is the origin column",
        expect_status=200,
        expect_length=len(HELLO),
        fragments=_everyone("app"),
        backend="node",
    ),
    Scenario(
        name="python",
        path="/app/x",
        description="Python ASGI application: GET /app/x passed by every server to the same "
                    "uvicorn (uvloop + httptools, one worker) running a 13-byte ASGI app, "
                    "upstream keep-alive wherever the server has it",
        expect_status=200,
        expect_length=len(HELLO),
        fragments=_everyone("app"),
        backend="uvicorn",
    ),
    Scenario(
        name="node-unix",
        path="/app/x",
        description="the node scenario's application on a unix socket instead of TCP "
                    "(proxy_pass to an upstream of unix:PATH, kept alive): the front end's "
                    "cost with the application where a managed one is",
        expect_status=200,
        expect_length=len(HELLO),
        fragments={"scalwsd": "app-unix", "nginx": "app-unix"},
        not_applicable=_UNIX_NA,
        backend="node-unix",
    ),
    Scenario(
        name="python-unix",
        path="/app/x",
        description="the python scenario's uvicorn (uvloop + httptools, one worker) on a "
                    "unix socket instead of TCP, as node-unix",
        expect_status=200,
        expect_length=len(HELLO),
        fragments={"scalwsd": "app-unix", "nginx": "app-unix"},
        not_applicable=_UNIX_NA,
        backend="python-unix",
    ),
    Scenario(
        name="python-wsgi",
        path="/app/x",
        description="Python WSGI application: GET /app/x passed by every server to the same "
                    "gunicorn (one gthread worker, 8 threads) running a 13-byte WSGI app, "
                    "upstream keep-alive wherever the server has it",
        expect_status=200,
        expect_length=len(HELLO),
        fragments=_everyone("app"),
        backend="gunicorn",
    ),
    Scenario(
        name="python-native",
        path="/app/x",
        description="the python scenario's ASGI app under scalwsd's native Python bridge "
                    "(python_bridge_pass to python3 -m scalws_bridge, one worker, on the "
                    "client's CPU): compare its req/s with the python scenario's nginx + uvicorn",
        expect_status=200,
        expect_length=len(HELLO),
        fragments={"scalwsd": "bridge"},
        not_applicable={s: "no native bridge (the python scenario runs it under uvicorn)"
                        for s in ("nginx", "h2o", "lighttpd")},
        backend="bridge",
    ),
    Scenario(
        name="python-native-wsgi",
        path="/app/x",
        description="the python-wsgi scenario's WSGI app under scalwsd's native Python bridge "
                    "(one worker): compare its req/s with the python-wsgi scenario's "
                    "nginx + gunicorn",
        expect_status=200,
        expect_length=len(HELLO),
        fragments={"scalwsd": "bridge"},
        not_applicable={s: "no native bridge (the python-wsgi scenario runs it under gunicorn)"
                        for s in ("nginx", "h2o", "lighttpd")},
        backend="bridge-wsgi",
    ),
    Scenario(
        name="python-wsgi-uwsgi",
        path="/app/x",
        description="the python-wsgi scenario's WSGI app under uWSGI (uwsgi-plugin-python3, "
                    "one process, one thread, uwsgi protocol on a unix socket, on the client's "
                    "CPU) behind uwsgi_pass with the uwsgi_params; uWSGI closes every "
                    "connection: compare with nginx + gunicorn and python-native-wsgi",
        expect_status=200,
        expect_length=len(HELLO),
        fragments={"scalwsd": "uwsgi", "nginx": "uwsgi"},
        not_applicable={"h2o": "no uwsgi protocol in h2o",
                        "lighttpd": "not configured (mod_scgi's uwsgi mode)"},
        backend="uwsgi",
    ),
    Scenario(
        name="python-managed",
        path="/app/x",
        description="the python scenario's ASGI app under uvicorn run by scalwsd itself "
                    "(python_app, server uvicorn, one process, its interpreter on the client's "
                    "CPU; python_pass NAME): compare with python-external, the same command "
                    "started by the harness",
        expect_status=200,
        expect_length=len(HELLO),
        fragments={"scalwsd": "python-managed"},
        not_applicable={s: "no managed applications" for s in ("nginx", "h2o", "lighttpd")},
        backend="managed-uvicorn",
    ),
    Scenario(
        name="python-external",
        path="/app/x",
        description="the command python-managed's python_app runs (uvicorn --uds, one "
                    "process), started by the harness on the client's CPU and reached with "
                    "python_pass unix:PATH: the external half of managed against external",
        expect_status=200,
        expect_length=len(HELLO),
        fragments={"scalwsd": "python-external"},
        not_applicable={s: "the comparison is scalwsd's own (see python for the peers)"
                        for s in ("nginx", "h2o", "lighttpd")},
        backend="uvicorn-unix",
    ),
    Scenario(
        name="node-managed",
        path="/app/x",
        description="the node scenario's app (hello.js) run by scalwsd itself (node_app, "
                    "one process, node on the client's CPU, PORT its unix socket; node_pass "
                    "NAME): compare with node-external, the same app started by the harness",
        expect_status=200,
        expect_length=len(HELLO),
        fragments={"scalwsd": "node-managed"},
        not_applicable={s: "no managed applications" for s in ("nginx", "h2o", "lighttpd")},
        backend="managed-node",
    ),
    Scenario(
        name="node-external",
        path="/app/x",
        description="node-managed's app (node hello.js on a unix socket, one process) "
                    "started by the harness on the client's CPU and reached with node_pass "
                    "to an upstream group of it: the external half of managed against external",
        expect_status=200,
        expect_length=len(HELLO),
        fragments={"scalwsd": "node-external"},
        not_applicable={s: "the comparison is scalwsd's own (see node for the peers)"
                        for s in ("nginx", "h2o", "lighttpd")},
        backend="node-unix",
    ),
    Scenario(
        name="cache-hit",
        path="/cache/x",
        description='response cache hits: GET /cache/x through each server\'s cache in '
                    'front of the proxy scenario\'s origin, which sends "Hello, world!" '
                    "(13 bytes) with Cache-Control: max-age=3600; after the first request "
                    "every one is a hit (0 origin requests in the window)",
        expect_status=200,
        expect_length=len(HELLO),
        # scalwsd keeps hot entries in shared memory (mem_size), nginx reads
        # each hit from its file; h2o's and lighttpd's caches are not set up
        fragments={"scalwsd": "cache", "nginx": "cache", "floor": "small"},
        not_applicable={"h2o": "no cache configured in the bench",
                        "lighttpd": "no cache configured in the bench"},
        with_floor=True,
        backend="origin",
    ),
    Scenario(
        name="cache-hit-vary",
        path="/cache-vary/x",
        description="response cache hits as cache-hit, of a response with Vary: "
                    "Accept-Encoding, Accept-Language, asked with a browser's two fields",
        expect_status=200,
        expect_length=len(HELLO),
        request_headers=("Accept-Encoding: gzip, deflate, br, zstd",
                         "Accept-Language: en-US,en;q=0.9,fr;q=0.8,de;q=0.7"),
        fragments={"scalwsd": "cache", "nginx": "cache", "floor": "small"},
        not_applicable={"h2o": "no cache configured in the bench",
                        "lighttpd": "no cache configured in the bench"},
        with_floor=True,
        backend="origin",
    ),
    Scenario(
        name="cache-hit-100k",
        path="/cache-100k/x",
        description="response cache hits of a 100 KiB object (max-age=3600), as cache-hit",
        expect_status=200,
        expect_length=100 * 1024,
        fragments={"scalwsd": "cache", "nginx": "cache", "floor": "100k"},
        not_applicable={"h2o": "no cache configured in the bench",
                        "lighttpd": "no cache configured in the bench"},
        with_floor=True,
        backend="origin",
        callgrind_counts=(1000, 3000),
    ),
    Scenario(
        name="cache-hit-file",
        path="/cache-file/x",
        description="response cache hits of the 100 KiB object sent from the entry's file "
                    "(scalwsd: mem_size=0, the file kept open by the worker; nginx reads "
                    "every hit from its file, as in cache-hit-100k)",
        expect_status=200,
        expect_length=100 * 1024,
        fragments={"scalwsd": "cache-file", "nginx": "cache", "floor": "100k"},
        not_applicable={"h2o": "no cache configured in the bench",
                        "lighttpd": "no cache configured in the bench"},
        with_floor=True,
        backend="origin",
        callgrind_counts=(1000, 3000),
    ),
    Scenario(
        name="tls-h2-static-small",
        path="/hello.txt",
        description="small static file over TLS 1.3 + HTTP/2: GET /hello.txt (13 bytes), "
                    "h2load, one stream at a time per connection",
        expect_status=200,
        expect_length=len(HELLO),
        fragments=_TLS,
        load_tool="h2load",
        scheme="https",
        tls=True,
    ),
    Scenario(
        name="tls-h2-mux-small",
        path="/hello.txt",
        description="small static file over TLS 1.3 + HTTP/2 with ten streams in flight per "
                    "connection: GET /hello.txt (13 bytes), h2load -m10",
        expect_status=200,
        expect_length=len(HELLO),
        fragments=_TLS,
        load_tool="h2load-m10",
        scheme="https",
        tls=True,
    ),
    Scenario(
        name="tls-static-small",
        path="/hello.txt",
        description="small static file over TLS 1.3, HTTP/1.1 keep-alive: GET /hello.txt "
                    "(13 bytes), wrk over https; the TLS and kernel cost of a request without "
                    "HTTP/2's, beside tls-h2-static-small",
        expect_status=200,
        expect_length=len(HELLO),
        fragments=_TLS,
        scheme="https",
        tls=True,
    ),
    Scenario(
        name="tls-static-1m",
        path="/1m.bin",
        description="1 MiB static file over TLS 1.3, HTTP/1.1 keep-alive (wrk over https; "
                    "kernel TLS where the kernel has it)",
        expect_status=200,
        expect_length=ONE_MIB,
        fragments=_TLS,
        scheme="https",
        tls=True,
        callgrind_counts=(100, 300),
    ),
    Scenario(
        name="tls-handshake",
        path="/hello.txt",
        description="full TLS 1.3 handshakes: a new connection per request, no resumption "
                    "(openssl s_time -new, 8 clients); GET /hello.txt over HTTP/1.0, then "
                    "close; req/s here is handshakes/s",
        expect_status=200,
        expect_length=len(HELLO),
        fragments=_TLS,
        load_tool="s_time-new",
        scheme="https",
        tls=True,
        callgrind_counts=(100, 300),
    ),
    Scenario(
        name="tls-resume",
        path="/hello.txt",
        description="resumed TLS 1.3 handshakes: a new connection per request resuming the "
                    "first one's session (openssl s_time -reuse, 8 clients); GET /hello.txt "
                    "over HTTP/1.0, then close; req/s here is handshakes/s",
        expect_status=200,
        expect_length=len(HELLO),
        fragments=_TLS,
        load_tool="s_time-reuse",
        scheme="https",
        tls=True,
        callgrind_counts=(100, 300),
    ),
]


# Compression: the 100 KiB page compressed on the fly at each coding's
# level 1 (nginx's gzip default; brotli and zstd at 1 too, the cheapest, so
# that servers are compared at the same work), and served precompressed.
# Debian's nginx has gzip only (brotli is a separate module, zstd none);
# h2o compresses with gzip and brotli, not zstd; lighttpd's mod_deflate
# does all three.
_NO_BR = "Debian's nginx has no brotli filter built in (a separate module package)"
_NO_ZSTD = "no zstd content coding in this server"

SCENARIOS += [
    Scenario(
        name="gzip-html-100k",
        path="/page.html",
        description="a 100 KiB HTML page gzipped on the fly at level 1 (nginx's default): "
                    "GET /page.html with Accept-Encoding: gzip, HTTP/1.1 keep-alive",
        expect_status=200,
        expect_length=-1,
        fragments=_everyone("gzip"),
        request_headers=("Accept-Encoding: gzip",),
        expect_encoding="gzip",
        callgrind_counts=(200, 600),
    ),
    Scenario(
        name="br-html-100k",
        path="/page.html",
        description="the 100 KiB page compressed with brotli on the fly at quality 1: "
                    "Accept-Encoding: br",
        expect_status=200,
        expect_length=-1,
        fragments={"scalwsd": "brotli", "h2o": "brotli"},
        # bench/configs/lighttpd/brotli.frag is kept for a lighttpd that works
        not_applicable={"nginx": _NO_BR,
                        "lighttpd": "Debian 12's lighttpd 1.4.69 crashes in libbrotlienc "
                                    "(segfault at address 0) on its first br response"},
        request_headers=("Accept-Encoding: br",),
        expect_encoding="br",
        callgrind_counts=(200, 600),
    ),
    Scenario(
        name="zstd-html-100k",
        path="/page.html",
        description="the 100 KiB page compressed with zstd on the fly at level 1: "
                    "Accept-Encoding: zstd",
        expect_status=200,
        expect_length=-1,
        fragments={"scalwsd": "zstd", "lighttpd": "zstd"},
        not_applicable={"nginx": _NO_ZSTD, "h2o": _NO_ZSTD},
        request_headers=("Accept-Encoding: zstd",),
        expect_encoding="zstd",
        callgrind_counts=(200, 600),
    ),
    Scenario(
        name="static-gzip",
        path="/page.html",
        description="the 100 KiB page served precompressed: page.html.gz (gzip -9) next to "
                    "page.html, Accept-Encoding: gzip (nginx gzip_static, h2o "
                    "file.send-compressed)",
        expect_status=200,
        expect_length=-1,
        fragments={"scalwsd": "gzip_static", "nginx": "gzip_static", "h2o": "gzip_static"},
        not_applicable={"lighttpd": "lighttpd 1.4 serves no precompressed siblings "
                                    "(mod_deflate caches its own output instead)"},
        request_headers=("Accept-Encoding: gzip",),
        expect_encoding="gzip",
    ),
]

# HTTP/3 over QUIC, driven by bench/h3load (ngtcp2 + nghttp3): 64
# connections, one request at a time on each, as tls-h2-static-small.
SCENARIOS += [
    Scenario(
        name="h3-static-small",
        path="/hello.txt",
        description="small static file over HTTP/3 (QUIC, TLS 1.3): GET /hello.txt (13 bytes), "
                    "h3load, one stream at a time per connection; compare with "
                    "tls-h2-static-small",
        expect_status=200,
        expect_length=len(HELLO),
        fragments={"scalwsd": "h3", "caddy": ""},
        not_applicable=_H3_NA,
        load_tool="h3load",
        scheme="https",
        tls=True,
    ),
    Scenario(
        name="h3-static-1m",
        path="/1m.bin",
        description="1 MiB static file over HTTP/3, GSO on where the server has it (scalwsd's "
                    "quic_gso on; Caddy 2.6's quic-go has no GSO); compare with "
                    "tls-static-1m",
        expect_status=200,
        expect_length=ONE_MIB,
        fragments={"scalwsd": "h3", "caddy": ""},
        not_applicable=_H3_NA,
        load_tool="h3load",
        scheme="https",
        tls=True,
        callgrind_counts=(100, 300),
    ),
    Scenario(
        name="h3-static-1m-nogso",
        path="/1m.bin",
        description="h3-static-1m without UDP GSO: scalwsd with quic_gso off, h3load with "
                    "--no-gso (one datagram per send, no GRO); Caddy as in h3-static-1m (no GSO "
                    "either way)",
        expect_status=200,
        expect_length=ONE_MIB,
        fragments={"scalwsd": "h3-nogso", "caddy": ""},
        not_applicable=_H3_NA,
        load_tool="h3load-nogso",
        scheme="https",
        tls=True,
        callgrind_counts=(100, 300),
    ),
]

BY_NAME = {s.name: s for s in SCENARIOS}


def select(names):
    """Scenarios by name, in table order; unknown names raise ValueError."""
    if not names:
        return list(SCENARIOS)
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        raise ValueError("unknown scenario(s): %s (known: %s)"
                         % (", ".join(unknown), ", ".join(BY_NAME)))
    return [s for s in SCENARIOS if s.name in names]
