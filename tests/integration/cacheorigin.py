"""
The origin of the cache tests: proxyorigin.Origin with one more route,
/c/..., whose response the test sets per path, so that each test says
exactly which caching fields the origin sends:

  o.set("/c/a", body=b"x", headers=[("Cache-Control", "max-age=60")],
        status=200, delay=0.0, cut=False)

A path not set answers 200 with the path as body and max-age=60.
Conditional requests: 304 (with the set fields, no body) when an ETag set
for the path is in If-None-Match, or when Last-Modified equals
If-Modified-Since. cut=True sends half of the announced body, then closes; pause=S sends
half, waits S seconds, then the rest. drop=True closes without answering.
o.count(path) is how many requests for the path arrived.

Also here: helpers for the tests, the cache configuration and the access
log of $upstream_cache_status.
"""
import itertools
import os
import shutil
import tempfile
import time

import pytest

import swsharness as h
from proxyorigin import Origin


class CacheOrigin(Origin):
    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.routes = {}

    def set(self, path, body=b"", headers=(), status=200, delay=0.0, cut=False, pause=0.0,
            drop=False):
        if isinstance(body, str):
            body = body.encode()
        with self.lock:
            self.routes[path] = dict(body=body, headers=list(headers), status=status,
                                     delay=delay, cut=cut, pause=pause, drop=drop)

    def count(self, path):
        with self.lock:
            return sum(1 for q in self.requests if q.path == path)

    def _route(self, c, req):
        if not req.path.startswith("/c/"):
            return super()._route(c, req)
        with self.lock:
            spec = self.routes.get(req.path)
        if spec is None:
            spec = dict(body=req.path.encode(), headers=[("Cache-Control", "max-age=60")],
                        status=200, delay=0.0, cut=False, pause=0.0)
        if spec["delay"]:
            time.sleep(spec["delay"])
        if spec.get("drop"):
            return False                  # closed without an answer
        hdrs = spec["headers"]
        etag = next((v for k, v in hdrs if k.lower() == "etag"), None)
        lm = next((v for k, v in hdrs if k.lower() == "last-modified"), None)
        inm = req.header("if-none-match")
        ims = req.header("if-modified-since")
        if (etag and inm and etag in [t.strip() for t in inm.split(",")]) or \
                (lm and ims and not inm and lm == ims):
            c.sendall(self._head(304, hdrs))
            return True
        body = spec["body"]
        if req.method == "HEAD":
            c.sendall(self._head(spec["status"], hdrs + [("Content-Length", str(len(body)))]))
            return True
        if spec["cut"]:
            c.sendall(self._head(spec["status"], hdrs + [("Content-Length", str(len(body)))])
                      + body[:len(body) // 2])
            return False
        if spec["pause"]:
            # half the body, a pause, the rest: a fill caught in the middle
            c.sendall(self._head(spec["status"], hdrs + [("Content-Length", str(len(body)))])
                      + body[:len(body) // 2])
            time.sleep(spec["pause"])
            c.sendall(body[len(body) // 2:])
            return True
        self._send(c, spec["status"], body, hdrs)
        return True


LOG_FORMAT = "log_format cachelog '$request_method $request_uri $status " \
             "$upstream_cache_status $upstream_cache_source $http_x_tag';"


def start(sws, o, path_params="", loc="", http="", server="", tmp=None, **kw):
    """scalwsd with a cache "c" in TMP/cache in front of o at /c/."""
    return sws(http="""
        proxy_cache_path @TMP@/cache keys_zone=c:1m %s;
        %s
        %s
    """ % (path_params, LOG_FORMAT, http), server="""
        location /c/ {
            proxy_pass http://%s;
            proxy_cache c;
            access_log @TMP@/cache.log cachelog;
            %s
        }
        %s
    """ % (o.addr, loc, server), **kw)


def statuses(srv):
    """(method, uri, status, cache status, source) of each logged request."""
    try:
        text = (srv.tmp / "cache.log").read_text()
    except OSError:
        return []
    return [tuple(line.split(" ")) for line in text.splitlines() if line]


_tags = itertools.count()


def get(srv, path, headers=(), method="GET", body=None, **kw):
    """A request and the cache status its log line says: (response, status).
    The line is found by a tag of this request (others may log meanwhile)."""
    tag = "t%d" % next(_tags)
    r = h.curl(srv.url(path), headers=list(headers) + ["X-Tag: " + tag], method=method,
               body=body, **kw)

    def line():
        return next((s for s in statuses(srv) if s[-1] == tag), None)
    h.wait_for(lambda: line() is not None, timeout=5)
    srv.last_source = line()[4]
    return r, line()[3]


def source(srv):
    """Where the last response of get() came from: memory, file or -."""
    return srv.last_source


@pytest.fixture
def corigin():
    """Factory: corigin() starts a CacheOrigin; all are stopped after the test."""
    started = []

    def start(name="origin", **kw):
        o = CacheOrigin(name, **kw)
        started.append(o)
        return o

    yield start
    for o in started:
        o.stop()


def entry_files(srv, name="cache"):
    """The entry files under TMP/<name> (not the temporary ones)."""
    out = []
    for d, _, files in os.walk(str(srv.tmp / name)):
        out += [os.path.join(d, f) for f in files if not f.startswith(".tmp.")]
    return sorted(out)


def temp_files(srv, name="cache"):
    return [f for f in os.listdir(str(srv.tmp / name)) if f.startswith(".tmp.")]
