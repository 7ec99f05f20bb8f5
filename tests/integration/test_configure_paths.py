"""configure's path options (--conf-path, --pid-path ...: nginx's names),
as the Debian package uses them, and the "user" directive of a server that
systemd starts as that user already."""
import os
import subprocess
from pathlib import Path

import swsharness as h

FHS = [
    "--prefix=/usr",
    "--sbin-path=/usr/sbin/scalwsd",
    "--conf-path=/etc/scalws/scalws.conf",
    "--modules-path=/usr/lib/scalws/modules",
    "--error-log-path=/var/log/scalws/error.log",
    "--http-log-path=/var/log/scalws/access.log",
    "--pid-path=/run/scalws/scalws.pid",
    "--http-client-body-temp-path=/var/cache/scalws/client_body_temp",
    "--http-proxy-temp-path=/var/cache/scalws/proxy_temp",
    "--html-path=/usr/share/scalws/html",
]


def configure(builddir, *args):
    return subprocess.run([os.path.join(h.SRC, "configure"), "--builddir=%s" % builddir]
                          + list(args), capture_output=True, timeout=300,
                          stdin=subprocess.DEVNULL)


def defines(builddir):
    out = {}
    for line in Path(builddir, "sws_auto_config.h").read_text().splitlines():
        parts = line.split(None, 2)
        if len(parts) == 3 and parts[0] == "#define":
            out[parts[1]] = parts[2].strip('"')
    return out


def mkvars(builddir):
    out = {}
    for line in Path(builddir, "config.mk").read_text().splitlines():
        k, sep, v = line.partition("=")
        if sep and not line.startswith("#"):
            out[k.strip()] = v.strip()
    return out


def test_fhs_paths(tmp_path):
    b = tmp_path / "b"
    r = configure(b, *FHS)
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    d = defines(b)
    assert d["SWS_PREFIX"] == "/usr/"
    assert d["SWS_CONF_PATH"] == "/etc/scalws/scalws.conf"
    assert d["SWS_MODULES_PATH"] == "/usr/lib/scalws/modules"
    assert d["SWS_PID_PATH"] == "/run/scalws/scalws.pid"
    assert d["SWS_ERROR_LOG_PATH"] == "/var/log/scalws/error.log"
    assert d["SWS_HTTP_LOG_PATH"] == "/var/log/scalws/access.log"
    assert d["SWS_HTTP_CLIENT_BODY_TEMP_PATH"] == "/var/cache/scalws/client_body_temp"
    assert d["SWS_HTTP_PROXY_TEMP_PATH"] == "/var/cache/scalws/proxy_temp"
    assert d["SWS_HTML_PATH"] == "/usr/share/scalws/html"
    m = mkvars(b)
    assert m["SBIN_PATH"] == "/usr/sbin/scalwsd" and m["CONF_DIR"] == "/etc/scalws"
    assert "modulesdir=/usr/lib/scalws/modules" in (b / "scalws.pc").read_text()
    out = r.stdout.decode()
    assert "pid file:        /run/scalws/scalws.pid" in out, out


def test_defaults_and_relative_paths(tmp_path):
    b = tmp_path / "b"
    # relative: under the prefix; slashes tidied
    r = configure(b, "--prefix=/opt/sws/", "--pid-path=run//scalws.pid", "--html-path=www/")
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    d = defines(b)
    assert d["SWS_PID_PATH"] == "/opt/sws/run/scalws.pid"
    assert d["SWS_HTML_PATH"] == "/opt/sws/www"
    assert d["SWS_ERROR_LOG_PATH"] == "/opt/sws/logs/error.log"
    assert d["SWS_CONF_PATH"] == "/opt/sws/conf/scalws.conf"
    assert d["SWS_HTTP_CLIENT_BODY_TEMP_PATH"] == "/opt/sws/client_body_temp"
    assert d["SWS_HTTP_PROXY_TEMP_PATH"] == "/opt/sws/proxy_temp"


def test_bad_paths_are_refused(tmp_path):
    r = configure(tmp_path / "b1", "--pid-path=/run/a b/x.pid")
    assert r.returncode != 0 and b"--pid-path" in r.stderr + r.stdout, r
    r = configure(tmp_path / "b2", "--conf-path")
    assert r.returncode != 0 and b'"--conf-path" needs a value' in r.stderr + r.stdout, r
    r = configure(tmp_path / "b3", "--html-path=")
    assert r.returncode != 0 and b"needs a value" in r.stderr + r.stdout, r


def as_nobody():
    os.setgid(65534)
    os.setuid(65534)


def test_user_directive_naming_the_current_user(tmp_path):
    """Under systemd (User=scalws) the packaged configuration's "user scalws"
    names the user the server runs as: no warning. Another user: the
    warning, as before."""
    tmp_path.chmod(0o777)
    h.make_traversable(tmp_path)
    scalwsd, modules, mime = h.copy_for_other_user(tmp_path)
    for name, user, warned in (("same", "nobody", False), ("other", "root", True)):
        d = tmp_path / name
        d.mkdir()
        d.chmod(0o777)
        (d / "html").mkdir()
        text = h.render(h.MAIN_TEMPLATE, d, [h.free_port()], main="user %s;" % user,
                        modules=modules, mime=mime)
        (d / "scalws.conf").write_text(text)
        (d / "scalws.conf").chmod(0o644)
        r = subprocess.run([scalwsd, "-t", "-p", str(d) + "/", "-c", str(d / "scalws.conf")],
                           capture_output=True, timeout=30, preexec_fn=as_nobody,
                           stdin=subprocess.DEVNULL)
        err = r.stderr.decode()
        assert r.returncode == 0, err
        assert ("has effect only when scalwsd is started as root" in err) == warned, (user, err)


def test_logs_created_as_root_go_to_the_user(tmp_path):
    """A check as root ("scalwsd -t", "user nobody") creates the logs owned
    by nobody, so that the same server started as nobody (systemd's User=)
    can open them; a log someone else owns keeps its owner."""
    if os.geteuid() != 0:
        import pytest
        pytest.skip("needs root")
    h.make_traversable(tmp_path)
    scalwsd, modules, mime = h.copy_for_other_user(tmp_path)
    (tmp_path / "html").mkdir()
    other = tmp_path / "other.log"
    other.write_text("")
    os.chown(other, 1, -1)
    text = h.render(h.MAIN_TEMPLATE, tmp_path, [h.free_port()], main="user nobody;",
                    modules=modules, mime=mime,
                    access_log=str(tmp_path / "access.log"),
                    http="    access_log %s;\n" % other)
    (tmp_path / "scalws.conf").write_text(text)
    r = h.run_scalwsd(["-t", "-p", str(tmp_path) + "/", "-c", str(tmp_path / "scalws.conf")])
    assert r.returncode == 0, r.stderr.decode()
    for name in ("error.log", "access.log"):
        assert os.stat(tmp_path / name).st_uid == 65534, name
    assert os.stat(other).st_uid == 1
    # and the server as nobody opens them
    r = subprocess.run([scalwsd, "-t", "-p", str(tmp_path) + "/", "-c",
                        str(tmp_path / "scalws.conf")], capture_output=True, timeout=30,
                       preexec_fn=as_nobody, stdin=subprocess.DEVNULL)
    assert r.returncode != 0 and b"other.log" in r.stderr, r.stderr   # not its file
    os.chown(other, 65534, -1)
    r = subprocess.run([scalwsd, "-t", "-p", str(tmp_path) + "/", "-c",
                        str(tmp_path / "scalws.conf")], capture_output=True, timeout=30,
                       preexec_fn=as_nobody, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr.decode()
