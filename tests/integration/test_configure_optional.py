"""configure's optional libraries of a module (sws_module_opt_pkgs in its
manifest): found, their flags and -DSWS_HAVE_PKG=1 go to the module; not
found, the module is built without them (compress: igzip when libisal is
there, zlib otherwise)."""
import os
import subprocess

import pytest

import swsharness as h
from test_configure_paths import configure, mkvars


def have_pkg(name):
    return subprocess.run(["pkg-config", "--exists", name]).returncode == 0


def hiding(tmp_path, name):
    """A pkg-config that says `name` is not installed: a machine without it."""
    p = tmp_path / ("pkg-config-without-%s" % name)
    p.write_text('#!/bin/sh\nfor a in "$@"; do [ "$a" = %s ] && exit 1; done\n'
                 'exec pkg-config "$@"\n' % name)
    p.chmod(0o755)
    return str(p)


@pytest.mark.skipif(not have_pkg("libisal"), reason="libisal-dev is not installed")
def test_compress_with_libisal(tmp_path):
    r = configure(tmp_path / "b", "--with-module=compress")
    assert r.returncode == 0, r.stderr
    assert b"checking for module compress: optional libisal ... yes" in r.stdout, r.stdout
    v = mkvars(tmp_path / "b")
    assert "-DSWS_HAVE_LIBISAL=1" in v["MOD_compress_CFLAGS"].split(), v
    assert "-lisal" in v["MOD_compress_LIBS"].split(), v


def test_compress_without_libisal(tmp_path):
    env = dict(os.environ, PKG_CONFIG=hiding(tmp_path, "libisal"))
    r = subprocess.run([os.path.join(h.SRC, "configure"), "--builddir=%s" % (tmp_path / "b"),
                        "--with-module=compress"], capture_output=True, timeout=300,
                       stdin=subprocess.DEVNULL, env=env)
    assert r.returncode == 0, r.stderr
    assert b"checking for module compress: optional libisal ... not found" in r.stdout, r.stdout
    v = mkvars(tmp_path / "b")
    assert "SWS_HAVE_LIBISAL" not in v["MOD_compress_CFLAGS"], v
    assert "-lisal" not in v["MOD_compress_LIBS"].split(), v
    assert "-lz" in v["MOD_compress_LIBS"].split(), v        # the required ones stay


def test_addon_optional_packages(tmp_path):
    # A third-party module's optional packages: one that exists (zlib), one
    # that does not; its required ones are untouched.
    mod = tmp_path / "opt_demo"
    mod.mkdir()
    (mod / "opt_demo.c").write_text("int sws_opt_demo;\n")
    (mod / "config").write_text('sws_module_name=opt_demo\n'
                                'sws_module_srcs="opt_demo.c"\n'
                                'sws_module_opt_pkgs="zlib sws-no-such-package"\n')
    r = configure(tmp_path / "b", "--with-module=static", "--add-module=%s" % mod)
    assert r.returncode == 0, r.stderr
    assert b"checking for module opt_demo: optional zlib ... yes" in r.stdout, r.stdout
    assert (b"checking for module opt_demo: optional sws-no-such-package ... not found"
            in r.stdout), r.stdout
    v = mkvars(tmp_path / "b")
    flags = v["MOD_opt_demo_CFLAGS"].split()
    assert "-DSWS_HAVE_ZLIB=1" in flags and "-DSWS_HAVE_SWS_NO_SUCH_PACKAGE=1" not in flags, v
    assert v["MOD_opt_demo_LIBS"].split() == ["-lz"], v
    # the module without optional packages has none of it
    assert "SWS_HAVE" not in v.get("MOD_static_CFLAGS", ""), v
