"""pytest fixtures for the ScalWS integration tests (see swsharness.py)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import swsharness as h  # noqa: E402


@pytest.fixture
def sws(tmp_path):
    """Factory: sws(locations/server/http/main blocks..., files={...}) starts a
    server in tmp_path (the first one) or tmp_path/sN (the next ones)."""
    started = []

    def start(**kw):
        d = tmp_path if not started else tmp_path / ("s%d" % len(started))
        d.mkdir(parents=True, exist_ok=True)
        try:
            srv = h.launch(d, **kw)
        except h.StartError as e:
            pytest.fail(str(e), pytrace=False)
        started.append(srv)
        return srv

    yield start
    for s in started:
        s.stop()


@pytest.fixture(scope="module")
def sws_module(tmp_path_factory):
    """Like sws, but servers live for the whole test module."""
    started = []

    def start(**kw):
        d = tmp_path_factory.mktemp("srv")
        try:
            srv = h.launch(d, **kw)
        except h.StartError as e:
            pytest.fail(str(e), pytrace=False)
        started.append(srv)
        return srv

    yield start
    for s in started:
        s.stop()


@pytest.fixture(scope="session")
def pki(tmp_path_factory):
    """A throwaway CA and certificates (tlsutil.Pki), made once per run."""
    import tlsutil
    p = tlsutil.Pki(tmp_path_factory.mktemp("pki"))
    for kind in ("ec", "rsa"):
        p.leaf("localhost", kind)
    for name in ("a.test", "b.test"):
        p.leaf(name, "ec")
    return p


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.when == "call" and rep.failed:
        for srv in list(h.RUNNING):
            rep.sections.append(("scalwsd %s (pid %s)" % (srv.tmp, srv.proc.pid),
                                 srv.diagnostics(3000)))


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    """After the test's fixtures (and, at a module's last test, the module's)
    have stopped their servers: a worker or helper that crashed meanwhile
    fails the test, even if every answer it gave was right."""
    if h.CRASHES:
        found = list(h.CRASHES)
        del h.CRASHES[:]
        raise AssertionError("scalwsd processes crashed:\n" + "\n".join(found))


@pytest.fixture
def origin(tmp_path):
    """Factory: origin(name=..., unix=..., keepalive=...) starts a test origin
    (tests/integration/proxyorigin.py); all are stopped after the test."""
    import shutil
    import tempfile
    from proxyorigin import Origin
    started = []
    sockdir = tempfile.mkdtemp(prefix="swsorig")    # short: sun_path is 108 bytes
    os.chmod(sockdir, 0o755)

    def start(name="origin", unix=None, **kw):
        if unix is True:
            unix = os.path.join(sockdir, "%s.sock" % name)
        o = Origin(name, unix=unix, **kw)
        started.append(o)
        return o

    yield start
    for o in started:
        o.stop()
    shutil.rmtree(sockdir, ignore_errors=True)
