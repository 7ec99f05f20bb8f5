"""The Debian package on a fresh Debian 12 root (make test-package).

Builds scalws and scalws-dev with dpkg-buildpackage (contrib/debian/make-deb,
lintian included), installs them with apt into a minimal Debian 12 root made
by debootstrap (cached between runs), and runs the server from the
package's files in a chroot, without systemd: it starts, serves the default
page, reloads, reopens its logs when logrotate rotates them, stops, and
"dpkg -r" leaves no process behind. The systemd unit is checked with
systemd-analyze (verify, and the security exposure that docs/packaging.md
states).

Environment:
  SWS_DEB_DIR         use the .deb files there instead of building them
  SWS_DEB_OPTIONS     DEB_BUILD_OPTIONS of the build (default "nopgo nocheck":
                      the packaging is tested, not the compiler's profile)
  SWS_TEST_ROOT_CACHE the cached root (default /var/cache/scalws-test/
                      bookworm-minbase.tar); SWS_DEBIAN_MIRROR its mirror
Needs root (chroot, mount), debootstrap, dpkg-dev, debhelper, lintian.
"""
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

SRC = Path(os.environ.get("SCALWS_SRC", Path(__file__).resolve().parents[2]))
CACHE = Path(os.environ.get("SWS_TEST_ROOT_CACHE",
                            "/var/cache/scalws-test/bookworm-minbase.tar"))
MIRROR = os.environ.get("SWS_DEBIAN_MIRROR", "http://deb.debian.org/debian")
APT_ARCHIVES = CACHE.parent / "apt-archives"
EXPOSURE_MAX = 2.0

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (chroot)")


def run(cmd, timeout=600, check=True, **kw):
    r = subprocess.run(cmd, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL,
                       **kw)
    if check and r.returncode != 0:
        raise AssertionError("%s: status %d\n--- stdout\n%s\n--- stderr\n%s" % (
            " ".join(map(str, cmd)), r.returncode,
            r.stdout.decode(errors="replace")[-4000:],
            r.stderr.decode(errors="replace")[-4000:]))
    return r


def wait_for(pred, timeout=10.0, step=0.05):
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v or time.monotonic() > deadline:
            return v
        time.sleep(step)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def get(port, path="/", timeout=5.0):
    """(status, body) of one HTTP/1.1 request, Connection: close."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(("GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
                   % path).encode())
        data = b""
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def listening(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


# ---------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def debs(tmp_path_factory):
    d = os.environ.get("SWS_DEB_DIR")
    if d:
        out = Path(d)
    else:
        out = tmp_path_factory.mktemp("deb")
        env = dict(os.environ, DEB_BUILD_OPTIONS=os.environ.get("SWS_DEB_OPTIONS",
                                                                "nopgo nocheck"))
        # make-deb fails on a lintian error, too
        run(["sh", str(SRC / "contrib/debian/make-deb"), str(out)], timeout=1800, env=env)
    found = {Path(p).name.split("_")[0]: Path(p) for p in glob.glob(str(out / "*.deb"))}
    assert "scalws" in found and "scalws-dev" in found, found
    return found


def make_cached_root():
    """debootstrap --variant=minbase bookworm, once; kept as a tar file."""
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    tmp = CACHE.parent / "bootstrap.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    run(["debootstrap", "--variant=minbase", "bookworm", str(tmp), MIRROR], timeout=1800)
    run(["tar", "-C", str(tmp), "-cf", str(CACHE) + ".new", "."], timeout=600)
    os.replace(str(CACHE) + ".new", CACHE)
    shutil.rmtree(tmp, ignore_errors=True)


class Root:
    """A fresh root from the cached tar file, /proc mounted, the apt cache
    of the host's test cache bind-mounted (downloads are kept)."""

    def __init__(self, path):
        self.path = Path(path)
        self.mounts = []

    def p(self, rel):
        return self.path / rel.lstrip("/")

    def setup(self):
        if not CACHE.exists():
            make_cached_root()
        self.path.mkdir(parents=True)
        run(["tar", "-C", str(self.path), "-xf", str(CACHE)], timeout=600)
        shutil.copy("/etc/resolv.conf", self.p("/etc/resolv.conf"))
        APT_ARCHIVES.mkdir(parents=True, exist_ok=True)
        self.mount(["-t", "proc", "proc"], "/proc")
        self.mount(["--bind", str(APT_ARCHIVES)], "/var/cache/apt/archives")

    def mount(self, args, where):
        run(["mount"] + args + [str(self.p(where))])
        self.mounts.append(self.p(where))

    def sh(self, script, timeout=600, check=True):
        return run(["chroot", str(self.path), "/bin/sh", "-c", script], timeout=timeout,
                   check=check, env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
                                     "DEBIAN_FRONTEND": "noninteractive", "LC_ALL": "C"})

    def processes(self):
        """pids of the processes whose root directory is this root."""
        out = []
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                if os.readlink("/proc/%s/root" % d) == str(self.path):
                    out.append(int(d))
            except OSError:
                pass
        return out

    def teardown(self):
        for pid in self.processes():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        wait_for(lambda: not self.processes(), 5)
        for m in reversed(self.mounts):
            subprocess.run(["umount", "-l", str(m)], capture_output=True, timeout=60)
        shutil.rmtree(self.path, ignore_errors=True)


@pytest.fixture(scope="module")
def root(tmp_path_factory, debs):
    r = Root(tmp_path_factory.mktemp("root") / "debian12")
    try:
        r.setup()
        for name, deb in debs.items():
            shutil.copy(deb, r.p("/tmp/" + deb.name))
        names = " ".join("/tmp/" + d.name for n, d in debs.items() if n in ("scalws", "scalws-dev"))
        # apt resolves the dependencies from the archive; logrotate for the test
        r.sh("apt-get update -qq && apt-get install -y -qq --no-install-recommends "
             "%s logrotate" % names, timeout=1200)
        yield r
    finally:
        r.teardown()


def server_pids(root):
    """The root's processes running scalwsd (also once dpkg removed it)."""
    out = []
    for p in root.processes():
        try:
            exe = os.readlink("/proc/%d/exe" % p)
        except OSError:
            continue
        if exe.split(" (deleted)")[0].endswith("/usr/sbin/scalwsd"):
            out.append(p)
    return out


def uid_of(pid):
    for line in Path("/proc/%d/status" % pid).read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    return None


def set_port(root, port):
    conf = root.p("/etc/scalws/scalws.conf")
    text = conf.read_text()
    # The package listens on port 80; the test on a free loopback port.
    text = re.sub(r"listen [^;]*;", "listen 127.0.0.1:%d;" % port, text, count=1)
    conf.write_text(text)


# ---------------------------------------------------------------- tests

def test_files_in_place(root):
    for f in ("/usr/sbin/scalwsd", "/etc/scalws/scalws.conf", "/etc/scalws/mime.types",
              "/usr/share/scalws/html/index.html", "/lib/systemd/system/scalws.service",
              "/etc/logrotate.d/scalws", "/usr/share/man/man8/scalwsd.8.gz",
              "/usr/share/man/man5/scalws.conf.5.gz", "/usr/include/scalws/scalws.h",
              "/usr/share/pkgconfig/scalws.pc", "/usr/lib/tmpfiles.d/scalws.conf"):
        assert root.p(f).exists(), f
    assert glob.glob(str(root.p("/usr/lib/scalws/modules/*.so")))
    # the configure-time paths are the FHS ones
    r = root.sh("/usr/sbin/scalwsd -V 2>&1")
    out = r.stdout.decode()
    for opt in ("--prefix=/usr", "--conf-path=/etc/scalws/scalws.conf",
                "--pid-path=/run/scalws/scalws.pid", "--error-log-path=/var/log/scalws/error.log"):
        assert opt in out, out
    # the system user, and the directories the postinst made for it
    r = root.sh("getent passwd scalws")
    assert b":/nonexistent:" in r.stdout, r.stdout
    for d in ("/var/log/scalws", "/var/cache/scalws", "/run/scalws"):
        st = os.stat(root.p(d))
        assert st.st_uid == int(r.stdout.split(b":")[2]), d
    # pkg-config finds the SDK where the modules go
    r = root.sh("sed -n 's/^modulesdir=//p' /usr/share/pkgconfig/scalws.pc")
    assert r.stdout.strip() == b"/usr/lib/scalws/modules"


def test_config_test(root):
    r = root.sh("/usr/sbin/scalwsd -t 2>&1")
    assert b"/etc/scalws/scalws.conf test is successful" in r.stdout, r.stdout


def caps(pid):
    st = {}
    for line in Path("/proc/%d/status" % pid).read_text().splitlines():
        k, _, v = line.partition(":")
        st[k] = v.strip()
    return st


def test_as_the_unit_runs_it(root):
    """What the unit gives the server, without systemd: the user scalws,
    CAP_NET_BIND_SERVICE alone (ambient, bounding set likewise), no new
    privileges; the package's configuration as it is, port 80 included (in
    a network namespace of its own, so that the host's port 80 is not
    needed). It binds, serves, writes its logs and stops."""
    pidfile = root.p("/run/scalws/scalws.pid")
    cmd = ("ip link set lo up && exec chroot %s setpriv --reuid=scalws --regid=scalws "
           "--init-groups --inh-caps=-all,+net_bind_service "
           "--ambient-caps=-all,+net_bind_service --bounding-set=-all,+net_bind_service "
           "--no-new-privs /usr/sbin/scalwsd -g 'daemon off;'" % root.path)
    srv = subprocess.Popen(["unshare", "--net", "--", "sh", "-c", cmd],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
    try:
        def in_netns(*argv):
            return subprocess.run(["nsenter", "--net=/proc/%d/ns/net" % srv.pid, "--"]
                                  + list(argv), capture_output=True, timeout=20)

        def serves():
            r = in_netns("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                         "http://127.0.0.1:80/")
            return r.stdout == b"200"
        if not wait_for(serves, 10):
            err = root.p("/var/log/scalws/error.log")
            out = srv.stdout.read() if srv.poll() is not None else b"(running)"
            raise AssertionError("not serving: %r\n%s\n%s" % (
                srv.poll(), out.decode(errors="replace"),
                err.read_text() if err.exists() else ""))
        r = in_netns("curl", "-s", "http://127.0.0.1:80/")
        assert r.stdout == root.p("/usr/share/scalws/html/index.html").read_bytes()
        uid = int(root.sh("id -u scalws").stdout)
        pids = server_pids(root)
        assert srv.pid in pids and len(pids) >= 2, pids
        for p in pids:
            st = caps(p)
            assert int(st["Uid"].split()[1]) == uid, st["Uid"]
            assert st["NoNewPrivs"] == "1"
            # CAP_NET_BIND_SERVICE is bit 10; nothing else, effective or bounding
            assert int(st["CapBnd"], 16) == 1 << 10, st["CapBnd"]
            assert int(st["CapEff"], 16) in (0, 1 << 10), st["CapEff"]
        assert int(caps(srv.pid)["CapEff"], 16) == 1 << 10
        assert int(pidfile.read_text()) == srv.pid
        assert os.stat(root.p("/var/log/scalws/access.log")).st_uid == uid
        # the request bodies' directory, made by the server itself
        assert os.stat(root.p("/var/cache/scalws/client_body_temp")).st_uid == uid
        os.kill(srv.pid, signal.SIGQUIT)
        srv.wait(timeout=10)
        assert srv.returncode == 0, srv.stdout.read()
        assert wait_for(lambda: not server_pids(root), 10)
    finally:
        if srv.poll() is None:
            srv.kill()
            srv.wait(timeout=10)


def test_serve_reload_reopen_stop_remove(root):
    port, port2 = free_port(), free_port()
    set_port(root, port)
    pidfile = root.p("/run/scalws/scalws.pid")

    # start: as root, daemon on (the default), from the package's files
    root.sh("/usr/sbin/scalwsd", timeout=30)
    assert wait_for(lambda: listening(port), 10), root.p("/var/log/scalws/error.log").read_text()
    master = int(pidfile.read_text())
    uid = int(root.sh("id -u scalws").stdout)
    workers = wait_for(lambda: [p for p in server_pids(root) if p != master], 5)
    assert workers and all(uid_of(w) == uid for w in workers), workers

    status, body = get(port)
    assert status == 200
    assert body == root.p("/usr/share/scalws/html/index.html").read_bytes()
    access = root.p("/var/log/scalws/access.log")
    assert wait_for(lambda: access.exists() and b'"GET / HTTP/1.1" 200' in access.read_bytes(), 5)

    # reload: a site added in conf.d, a new generation of workers
    root.p("/etc/scalws/conf.d/test.conf").write_text(
        'server { listen 127.0.0.1:%d; location = /ver { respond 200 "v2"; } }\n' % port2)
    root.sh("/usr/sbin/scalwsd -s reload")
    assert wait_for(lambda: listening(port2), 10), root.p("/var/log/scalws/error.log").read_text()
    assert get(port2, "/ver") == (200, b"v2")
    assert wait_for(lambda: not set(workers) & set(server_pids(root)), 10)
    assert int(pidfile.read_text()) == master

    # logrotate with the package's configuration: USR1 reopens the logs
    get(port, "/before-rotate")
    root.sh("logrotate -f /etc/logrotate.d/scalws")
    rotated = root.p("/var/log/scalws/access.log.1")
    assert rotated.exists() and b"/before-rotate" in rotated.read_bytes()
    get(port, "/after-rotate")
    assert wait_for(lambda: access.exists() and b"/after-rotate" in access.read_bytes(), 5)
    assert b"/after-rotate" not in rotated.read_bytes()
    assert os.stat(access).st_uid == uid
    # the error log too: the notice went to the old file, the worker's
    # error about the missing page to the new one
    assert b"reopening logs" in root.p("/var/log/scalws/error.log.1").read_bytes()
    assert b"after-rotate" in root.p("/var/log/scalws/error.log").read_bytes()

    # stop
    root.sh("/usr/sbin/scalwsd -s quit")
    assert wait_for(lambda: not server_pids(root), 10), server_pids(root)
    assert not pidfile.exists()
    assert not listening(port)

    # started again, then the package removed: the prerm stops it
    root.sh("/usr/sbin/scalwsd", timeout=30)
    assert wait_for(lambda: listening(port), 10)
    assert server_pids(root)
    root.sh("dpkg -r scalws-dev scalws", timeout=120)
    assert wait_for(lambda: not server_pids(root), 10), server_pids(root)
    assert not root.processes(), root.processes()
    assert not root.p("/usr/sbin/scalwsd").exists()
    # conffiles stay until purge; purge takes the logs too
    assert root.p("/etc/scalws/scalws.conf").exists()
    root.sh("dpkg --purge scalws", timeout=120)
    assert not root.p("/etc/scalws/scalws.conf").exists()
    assert not root.p("/var/log/scalws").exists()


def unit_file(debs, tmp_path):
    d = tmp_path / "x"
    run(["dpkg-deb", "-x", str(debs["scalws"]), str(d)])
    return d, d / "lib/systemd/system/scalws.service"


def test_unit_verifies(debs, tmp_path):
    d, unit = unit_file(debs, tmp_path)
    # The binary is looked up on this machine: the unit's copy names the
    # package's (extracted here); the rest is the package's unit as it is.
    text = unit.read_text().replace("/usr/sbin/scalwsd", str(d / "usr/sbin/scalwsd"))
    assert text != unit.read_text()
    check = tmp_path / "scalws.service"
    check.write_text(text)
    r = run(["systemd-analyze", "verify", "--man=no", str(check)], check=False)
    out = (r.stdout + r.stderr).decode()
    assert r.returncode == 0 and "scalws.service:" not in out, out


def test_unit_security_exposure(debs, tmp_path):
    d, unit = unit_file(debs, tmp_path)
    r = run(["systemd-analyze", "security", "--offline=yes", "--no-pager", str(unit)],
            check=False)
    out = r.stdout.decode()
    m = re.search(r"Overall exposure level for scalws.service: (\d+\.\d+)", out)
    assert m, out[-2000:]
    assert float(m.group(1)) <= EXPOSURE_MAX, out
    # the number docs/packaging.md gives
    doc = (SRC / "docs/packaging.md").read_text()
    assert "exposure %s" % m.group(1) in doc, m.group(1)
