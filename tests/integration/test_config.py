"""Configuration: -t / -T, errors naming FILE:LINE (nginx syntax and YAML),
the repository's configuration files, YAML equivalence."""
import os
import shutil
import re
from pathlib import Path

import pytest

import swsharness as h

YAML_TEMPLATE = """\
modules_dir: @MODULES@
@LOAD@
error_log: @TMP@/error.log @LOGLEVEL@
pid: @TMP@/scalws.pid
daemon: off
master_process: on
worker_processes: @WORKERS@
@MAIN@
events:
  worker_connections: 1024
http:
  include: @MIME@
  default_type: application/octet-stream
  access_log: @ACCESS_LOG@
  keepalive_timeout: @KEEPALIVE@
@HTTP@
  server:
    listen: 127.0.0.1:@PORT@
    server_name: localhost
    root: @TMP@/html
    location = /respond:
      respond: '200 "Hello, world!"'
@SERVER@
"""


def write_conf(tmp, template, name, **kw):
    tmp = Path(tmp)
    (tmp / "html").mkdir(parents=True, exist_ok=True)
    h.make_traversable(tmp)
    text = h.render(template, tmp, [h.free_port()], **kw)
    p = tmp / name
    p.write_text(text)
    return p, text


def marker_line(text, marker="# ERR"):
    for i, ln in enumerate(text.splitlines(), 1):
        if marker in ln:
            return i
    raise AssertionError("no marker")


def run_t(tmp, conf, extra=("-t",)):
    return h.run_scalwsd(list(extra) + ["-p", str(tmp) + "/", "-c", str(conf)])


# ---------------------------------------------------------------- -t / -T

def test_t_ok_exit_0(tmp_path):
    conf, _ = write_conf(tmp_path, h.MAIN_TEMPLATE, "scalws.conf")
    r = run_t(tmp_path, conf)
    assert r.returncode == 0, r.stderr.decode()


def test_t_yaml_ok_exit_0(tmp_path):
    conf, _ = write_conf(tmp_path, YAML_TEMPLATE, "scalws.yaml")
    r = run_t(tmp_path, conf)
    assert r.returncode == 0, r.stderr.decode()


def test_t_does_not_listen(tmp_path):
    conf, text = write_conf(tmp_path, h.MAIN_TEMPLATE, "scalws.conf")
    port = int(re.search(r"listen 127\.0\.0\.1:(\d+)", text).group(1))
    blocker = __import__("socket").socket()
    blocker.bind(("127.0.0.1", port))     # taken: -t must not need it
    blocker.listen(1)
    try:
        r = run_t(tmp_path, conf)
    finally:
        blocker.close()
    assert r.returncode == 0, r.stderr.decode()


def test_T_dumps_configuration(tmp_path):
    conf, _ = write_conf(tmp_path, h.MAIN_TEMPLATE, "scalws.conf")
    r = run_t(tmp_path, conf, ("-T",))
    assert r.returncode == 0, r.stderr.decode()
    out = r.stdout.decode()
    assert "location = /respond" in out, out[:2000]
    assert "Hello, world!" in out
    assert "text/html" in out, "the included mime.types is not expanded"


def strip_file_banners(out):
    return "\n".join(ln for ln in out.splitlines()
                     if not ln.startswith("# configuration file"))


def test_T_nginx_and_yaml_templates_identical(tmp_path):
    a = tmp_path / "a"
    b = tmp_path / "b"
    a.mkdir()
    b.mkdir()
    port = h.free_port()
    ta = h.render(h.MAIN_TEMPLATE, tmp_path, [port])
    tb = h.render(YAML_TEMPLATE, tmp_path, [port])
    (tmp_path / "html").mkdir()
    (a / "scalws.conf").write_text(ta)
    (b / "scalws.yaml").write_text(tb)
    ra = run_t(tmp_path, a / "scalws.conf", ("-T",))
    rb = run_t(tmp_path, b / "scalws.yaml", ("-T",))
    assert ra.returncode == 0, ra.stderr.decode()
    assert rb.returncode == 0, rb.stderr.decode()
    assert strip_file_banners(ra.stdout.decode()) == strip_file_banners(rb.stdout.decode())


def test_T_repo_conf_and_yaml_identical(tmp_path):
    repo = Path(h.SRC)
    assert (repo / "conf" / "scalws.conf").exists() and (repo / "conf" / "scalws.yaml").exists(), \
        "conf/scalws.conf and conf/scalws.yaml must exist"
    # A prefix of our own (a fresh clone has no logs/ for the error log):
    # the repo's conf/ and html/ under it.
    shutil.copytree(repo / "conf", tmp_path / "conf")
    shutil.copytree(repo / "html", tmp_path / "html")
    (tmp_path / "logs").mkdir()
    conf = tmp_path / "conf" / "scalws.conf"
    yaml = tmp_path / "conf" / "scalws.yaml"
    # the repo's files name no modules_dir (the installed one is the
    # default): point them at the build's modules with -g
    g = ["-g", "modules_dir %s;" % h.MODULES]
    ra = h.run_scalwsd(["-T", "-p", str(tmp_path) + "/", "-c", str(conf)] + g)
    rb = h.run_scalwsd(["-T", "-p", str(tmp_path) + "/", "-c", str(yaml)] + g)
    assert ra.returncode == 0, ra.stderr.decode()
    assert rb.returncode == 0, rb.stderr.decode()
    da = strip_file_banners(ra.stdout.decode())
    db = strip_file_banners(rb.stdout.decode())
    assert da.strip(), "empty -T output"
    assert da == db, "-T differs:\n--- conf\n%s\n--- yaml\n%s" % (da[:3000], db[:3000])


def test_repo_mime_types_exists():
    assert os.path.exists(h.MIME), h.MIME


# ---------------------------------------------------------------- errors

NGINX_ERRORS = {
    "unknown_directive": dict(server="        foo_bar_baz 1;  # ERR\n",
                              words=["foo_bar_baz"]),
    "wrong_context": dict(main="root /tmp;  # ERR\n", words=["root"]),
    "wrong_context_location_in_http": dict(http="    location /x { }  # ERR\n",
                                           words=["location"]),
    "wrong_arg_count": dict(server="        root /a /b;  # ERR\n", words=["root"]),
    "no_args": dict(server="        root;  # ERR\n", words=["root"]),
    "bad_time_value": dict(server="        keepalive_timeout abc;  # ERR\n",
                           words=["keepalive_timeout"]),
    "bad_flag_value": dict(server="        sendfile maybe;  # ERR\n", words=["sendfile"]),
    "bad_size_value": dict(server="        client_max_body_size 10q;  # ERR\n",
                           words=["client_max_body_size"]),
    "duplicate": dict(http="    keepalive_timeout 6s;  # ERR\n",
                      words=["keepalive_timeout", "duplicate"]),
    "load_module_missing": dict(main="load_module @TMP@/nonexistent_mod.so;  # ERR\n",
                                words=["nonexistent_mod.so"]),
    "missing_include": dict(http="    include @TMP@/missing_file.conf;  # ERR\n",
                            words=["missing_file.conf"]),
    "block_for_simple_directive": dict(server="        root /x { }  # ERR\n",
                                       words=["root"]),
}


@pytest.mark.parametrize("case", sorted(NGINX_ERRORS))
def test_nginx_config_error_names_file_line(tmp_path, case):
    spec = dict(NGINX_ERRORS[case])
    words = spec.pop("words")
    conf, text = write_conf(tmp_path, h.MAIN_TEMPLATE, "scalws.conf", **spec)
    line = marker_line(text)
    r = run_t(tmp_path, conf)
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode != 0, "exit 0 for %s:\n%s" % (case, err)
    assert "%s:%d" % (conf, line) in err, "expected %s:%d in stderr:\n%s" % (conf, line, err)
    for w in words:
        assert w in err, "expected %r in stderr:\n%s" % (w, err)


def test_error_in_included_file_names_it(tmp_path):
    inc = tmp_path / "inc.conf"
    inc.write_text("# included\n\nbogus_directive on;\n")
    conf, _ = write_conf(tmp_path, h.MAIN_TEMPLATE, "scalws.conf",
                         server="        include %s;\n" % inc)
    r = run_t(tmp_path, conf)
    err = r.stderr.decode()
    assert r.returncode != 0
    assert "%s:3" % inc in err, err


def test_unterminated_block(tmp_path):
    conf = tmp_path / "scalws.conf"
    (tmp_path / "html").mkdir()
    conf.write_text("events {\n    worker_connections 10;\n")
    r = run_t(tmp_path, conf)
    assert r.returncode != 0
    assert str(conf) in r.stderr.decode(), r.stderr.decode()


def test_missing_semicolon(tmp_path):
    conf, text = write_conf(tmp_path, h.MAIN_TEMPLATE, "scalws.conf",
                            server='        location = /x { respond 200 "x" }  # ERR\n')
    r = run_t(tmp_path, conf)
    assert r.returncode != 0
    assert "%s:%d" % (conf, marker_line(text)) in r.stderr.decode(), r.stderr.decode()


def test_unknown_directive_at_startup_exits_nonzero(tmp_path):
    rc, out, listening = h.start_expect_failure(
        tmp_path, server="        foo_bar_baz 1;\n")
    assert rc is not None and rc != 0, "server did not exit (rc=%r)\n%s" % (rc, out)
    assert not listening
    assert "foo_bar_baz" in out


YAML_ERRORS = {
    "unknown_directive": dict(server="    foo_bar_baz: 1  # ERR\n", words=["foo_bar_baz"]),
    "wrong_context": dict(main="root: /tmp  # ERR\n", words=["root"]),
    "wrong_arg_count": dict(server="    root: /a /b  # ERR\n", words=["root"]),
    "bad_time_value": dict(server="    keepalive_timeout: abc  # ERR\n",
                           words=["keepalive_timeout"]),
    "bad_flag_value": dict(server="    sendfile: maybe  # ERR\n", words=["sendfile"]),
    "duplicate": dict(http="  keepalive_timeout: 6s  # ERR\n",
                      words=["keepalive_timeout", "duplicate"]),
    "load_module_missing": dict(main="load_module: @TMP@/nonexistent_mod.so  # ERR\n",
                                words=["nonexistent_mod.so"]),
    "missing_include": dict(http="  include: @TMP@/missing_file.conf  # ERR\n",
                            words=["missing_file.conf"]),
}


@pytest.mark.parametrize("case", sorted(YAML_ERRORS))
def test_yaml_config_error_names_file_line(tmp_path, case):
    spec = dict(YAML_ERRORS[case])
    words = spec.pop("words")
    conf, text = write_conf(tmp_path, YAML_TEMPLATE, "scalws.yaml", **spec)
    line = marker_line(text)
    r = run_t(tmp_path, conf)
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode != 0, "exit 0 for %s:\n%s" % (case, err)
    assert "%s:%d" % (conf, line) in err, "expected %s:%d in stderr:\n%s" % (conf, line, err)
    for w in words:
        assert w in err, "expected %r in stderr:\n%s" % (w, err)


def test_yaml_syntax_error_names_file(tmp_path):
    conf, text = write_conf(tmp_path, YAML_TEMPLATE, "scalws.yaml",
                            server="    location = /x:\n      respond: [1, 2  # ERR\n")
    r = run_t(tmp_path, conf)
    err = r.stderr.decode()
    assert r.returncode != 0
    assert str(conf) in err, err


def test_yaml_error_in_included_nginx_file(tmp_path):
    inc = tmp_path / "part.conf"
    inc.write_text("\nbogus_directive on;\n")
    conf, _ = write_conf(tmp_path, YAML_TEMPLATE, "scalws.yaml",
                         server="    include: %s\n" % inc)
    r = run_t(tmp_path, conf)
    assert r.returncode != 0
    assert "%s:2" % inc in r.stderr.decode(), r.stderr.decode()


# ---------------------------------------------------------------- YAML serves the same

EXTRA_NGINX = """
        location /files/ { alias @TMP@/other/; }
        location ~ \\.php$ { return 404; }
        location = /r301 { return 301 https://example.com/x; }
"""
EXTRA_YAML = """\
    location /files/:
      alias: @TMP@/other/
    location ~ \\.php$:
      return: 404
    location = /r301:
      return: 301 https://example.com/x
"""


def test_yaml_serves_same_as_nginx(sws):
    files = {"html/hello.txt": b"hello\n", "html/index.html": b"index\n",
             "other/a.txt": b"aliased\n"}
    a = sws(files=files, server=EXTRA_NGINX)
    b = sws(files=files, server=EXTRA_YAML, conf=YAML_TEMPLATE, conf_name="scalws.yaml")
    for path in ("/respond", "/hello.txt", "/", "/files/a.txt", "/x.php", "/missing",
                 "/r301"):
        ra = h.curl(a.url(path))
        rb = h.curl(b.url(path))
        assert ra.status == rb.status, (path, ra, rb)
        assert ra.body == rb.body, (path, ra, rb)
        for name in ("Content-Type", "Content-Length", "Location"):
            assert ra.header(name) == rb.header(name), (path, name, ra, rb)
    assert h.curl(b.url("/respond")).body == b"Hello, world!"
    assert h.curl(b.url("/files/a.txt")).body == b"aliased\n"


# "name=value" parameters: each malformed value is refused with FILE:LINE.
PARAM_ERRORS = {
    "listen_backlog_zero": ("server", "        listen 127.0.0.1:@PORT2@ backlog=0;  # ERR\n"),
    "listen_backlog_text": ("server", "        listen 127.0.0.1:@PORT2@ backlog=x;  # ERR\n"),
    "access_log_buffer": ("http", "    access_log @TMP@/a.log combined buffer=0;  # ERR\n"),
    "access_log_flush": ("http", "    access_log @TMP@/a.log combined buffer=4k flush=never;  # ERR\n"),
    "access_log_unknown": ("http", "    access_log @TMP@/a.log combined gzip=1;  # ERR\n"),
}


@pytest.mark.parametrize("case", sorted(PARAM_ERRORS))
def test_bad_name_value_parameters(tmp_path, case):
    where, text = PARAM_ERRORS[case]
    (tmp_path / "html").mkdir(parents=True, exist_ok=True)
    conf_text = h.render(h.MAIN_TEMPLATE, tmp_path, [h.free_port(), h.free_port()],
                         **{where: text})
    conf = tmp_path / "scalws.conf"
    conf.write_text(conf_text)
    line = marker_line(conf_text)
    r = run_t(tmp_path, conf)
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode != 0, err
    assert "%s:%d" % (conf, line) in err, err
