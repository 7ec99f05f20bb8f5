"""Third-party modules: a good one loads and works; bad ones are refused at
start-up with a message naming the file (and both ABIs), nothing listening."""
import glob
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import swsharness as h

GOOD = r"""
#include <scalws/scalws.h>

typedef struct {
    sws_str_t  name;
    sws_str_t  value;
} test_hdr_conf_t;

extern sws_module_t sws_module;
static sws_http_header_filter_pt next_header_filter;

static void *
create_loc(sws_conf_t *cf)
{
    return sws_pcalloc(sws_conf_pool(cf), sizeof(test_hdr_conf_t));
}

static char *
merge_loc(sws_conf_t *cf, void *parent, void *child)
{
    test_hdr_conf_t *p = parent, *c = child;
    (void) cf;
    if (c->name.data == NULL) {
        *c = *p;
    }
    return SWS_CONF_OK;
}

static char *
set_header(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    test_hdr_conf_t *c = conf;
    sws_str_t *n = sws_conf_arg(cf, 1), *v = sws_conf_arg(cf, 2);
    (void) cmd;
    if (c->name.data != NULL) {
        return "is duplicate";
    }
    c->name.len = n->len;
    c->name.data = sws_pstrdup(sws_conf_pool(cf), n);
    c->value.len = v->len;
    c->value.data = sws_pstrdup(sws_conf_pool(cf), v);
    return SWS_CONF_OK;
}

static sws_int_t
header_filter(sws_http_request_t *r)
{
    test_hdr_conf_t *c = sws_http_loc_conf(r, &sws_module);
    if (c != NULL && c->name.data != NULL) {
        if (sws_http_header_out_add(r, &c->name, &c->value) == NULL) {
            return SWS_ERROR;
        }
    }
    return next_header_filter(r);
}

static sws_int_t
postconf(sws_conf_t *cf)
{
    (void) cf;
    next_header_filter = sws_http_insert_header_filter(header_filter);
    return SWS_OK;
}

static const sws_command_t commands[] = {
    { "test_header",
      SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF | SWS_CONF_TAKE2,
      set_header, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    "MODNAME",
    NULL,
    commands,
    NULL, NULL,             /* main conf */
    NULL, NULL,             /* srv conf */
    create_loc, merge_loc,  /* loc conf */
    postconf,
    NULL, NULL, NULL,       /* init_master, init_worker, exit_worker */
    { NULL },
    0, 0
};
"""


def bare_module(name, major="SWS_ABI_MAJOR", minor="SWS_ABI_MINOR", requires="NULL",
                extra=""):
    return r"""
#include <scalws/scalws.h>
%s
SWS_EXPORT sws_module_t sws_module = {
    .abi_major = %s,
    .abi_minor = %s,
    .name = "%s",
    .requires = %s,
};
""" % (extra, major, minor, name, requires)


def good_module(tmp, name="test_header_mod", fname=None):
    return h.build_module(Path(tmp) / "mods", fname or name, GOOD.replace("MODNAME", name))


def refused(tmp, so_paths, words, **kw):
    load = "".join("load_module %s;\n" % p for p in so_paths)
    rc, out, listening = h.start_expect_failure(tmp, load=load, **kw)
    assert rc is not None, "the server kept running with a bad module\n%s" % out
    assert rc != 0, "exit status 0 with a bad module\n%s" % out
    assert not listening, "something listens after a refused start-up"
    for w in words:
        assert str(w) in out, "expected %r in the message:\n%s" % (str(w), out)
    return out


# ---------------------------------------------------------------- good

def test_good_module_loads_and_works(sws, tmp_path):
    so = good_module(tmp_path)
    s = sws(load="load_module %s;" % so, server="""
        location = /with { test_header X-Test-Module yes; respond 200 "with"; }
        location /inherit/ { respond 200 "inherit"; }
        test_header X-Server-Level srv;
""")
    r = h.curl(s.url("/with"))
    assert r.status == 200 and r.body == b"with", r
    assert r.header("X-Test-Module") == "yes", r
    assert r.header("X-Server-Level") is None, r
    r = h.curl(s.url("/inherit/x"))
    assert r.header("X-Server-Level") == "srv", r
    r = h.curl(s.url("/respond"))
    assert r.status == 200 and r.header("X-Test-Module") is None
    # on error pages too: the filter sees every response
    r = h.curl(s.url("/missing-file"))
    assert r.status == 404 and r.header("X-Server-Level") == "srv", r


def test_good_module_in_modules_dir(sws, tmp_path):
    """Dropped into the modules directory next to the in-tree modules."""
    so = good_module(tmp_path)
    mdir = tmp_path / "modules"
    mdir.mkdir()
    for f in glob.glob(os.path.join(h.MODULES, "*.so")):
        os.symlink(f, mdir / os.path.basename(f))
    shutil.copy(so, mdir / "zz_test_header.so")
    h.make_traversable(mdir)
    s = sws(modules=str(mdir), server="""
        location = /with { test_header X-Test-Module dir; respond 200 "with"; }
""")
    r = h.curl(s.url("/with"))
    assert r.status == 200 and r.header("X-Test-Module") == "dir", r


def test_module_directive_unknown_without_module(tmp_path):
    rc, out, listening = h.start_expect_failure(tmp_path, server="""
        location = /with { test_header X-Test-Module yes; respond 200 "with"; }
""")
    assert rc not in (None, 0), out
    assert "test_header" in out and not listening


def test_good_module_directive_wrong_args(tmp_path):
    so = good_module(tmp_path)
    rc, out, listening = h.start_expect_failure(tmp_path, load="load_module %s;" % so,
                                                server="        test_header onlyone;\n")
    assert rc not in (None, 0), out
    assert "test_header" in out and str(tmp_path / "scalws.conf") in out, out


# ---------------------------------------------------------------- refusals

def test_abi_major_mismatch_refused(tmp_path):
    so = h.build_module(tmp_path / "mods", "abi_major",
                        bare_module("abi_major", major=str(h.ABI_MAJOR + 1), minor="0"))
    refused(tmp_path, [so], [so, "%d.0" % (h.ABI_MAJOR + 1),
                             "%d.%d" % (h.ABI_MAJOR, h.ABI_MINOR)])


def test_abi_major_older_refused(tmp_path):
    if h.ABI_MAJOR == 0:
        pytest.skip("no older major ABI exists")
    so = h.build_module(tmp_path / "mods", "abi_old",
                        bare_module("abi_old", major=str(h.ABI_MAJOR - 1), minor="0"))
    refused(tmp_path, [so], [so])


def test_abi_minor_newer_refused(tmp_path):
    so = h.build_module(tmp_path / "mods", "abi_minor",
                        bare_module("abi_minor", minor=str(h.ABI_MINOR + 1)))
    refused(tmp_path, [so], [so, "%d.%d" % (h.ABI_MAJOR, h.ABI_MINOR + 1),
                             "%d.%d" % (h.ABI_MAJOR, h.ABI_MINOR)])


# ---------------------------------------------------------------- what a module may use

# A module that calls NAME (declared here, not in the SDK) when it is
# configured: RTLD_NOW resolves it at load time, so the start fails there.
CALLS = r"""
#include <scalws/scalws.h>
%(decl)s
static sws_int_t
postconf(sws_conf_t *cf)
{
    (void) cf;
    return %(call)s ? SWS_OK : SWS_ERROR;
}
SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI, .name = "%(name)s", .postconfiguration = postconf,
    %(extra)s
};
"""


def calls_module(tmp, name, decl, call, extra="", libs=()):
    src = CALLS % {"decl": decl, "call": call, "name": name, "extra": extra}
    if not libs:
        return h.build_module(tmp / "mods", name, src)
    d = tmp / "mods"
    d.mkdir(parents=True, exist_ok=True)
    (d / (name + ".c")).write_text(src)
    r = subprocess.run(["cc", "-std=gnu11", "-shared", "-fPIC", "-O1", "-Wall", "-I", h.INCLUDE,
                        "-o", str(d / (name + ".so")), str(d / (name + ".c"))] + list(libs),
                       capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    h.make_traversable(d)
    return d / (name + ".so")


def symbols(args):
    r = subprocess.run(["nm"] + args + [str(h.SCALWSD)], capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    return {line.split()[-1] for line in r.stdout.decode().splitlines()
            if len(line.split()) == 3 and line.split()[1] in "TtDdBbRr"}


def test_core_internal_function_refused(tmp_path):
    """sws_cycle_init is a core function (src/core/sws_cycle.h) that scalwsd
    has but does not export: a module calling it is refused, naming it."""
    assert "sws_cycle_init" not in symbols(["-D", "--defined-only"])
    full = symbols([])
    if full:                        # not a stripped binary: the function is there
        assert "sws_cycle_init" in full
    so = calls_module(tmp_path, "internal_user",
                      "void *sws_cycle_init(void *old, const void *args);",
                      "sws_cycle_init(NULL, NULL) != NULL")
    out = refused(tmp_path, [so], ['module "%s" uses "sws_cycle_init"' % so,
                                   "neither in the SDK of this scalwsd (ABI %d.%d)" % (h.ABI_MAJOR, h.ABI_MINOR)])
    assert "dlopen()" not in out, out


def test_library_of_scalwsd_not_lent_to_modules(tmp_path):
    """scalwsd links nghttp2, but a module that calls nghttp2 without linking
    it is refused; linked with -lnghttp2 the same module loads."""
    decl = "const void *nghttp2_version(int least);"
    call = "nghttp2_version(0) != NULL"
    so = calls_module(tmp_path, "h2_unlinked", decl, call)
    refused(tmp_path, [so], ['module "%s" uses "nghttp2_version"' % so,
                             "nor in a library the module links"])
    for sym, lib in (("SSL_CTX_new", "-lssl"), ("nghttp2_version", "-lnghttp2")):
        assert sym not in symbols(["-D", "--defined-only"]), sym
    linked = calls_module(tmp_path, "h2_linked", decl, call, libs=["-lnghttp2"])
    r = h.run_scalwsd(["-t", "-p", str(tmp_path) + "/", "-c", str(conf_with(tmp_path, linked))])
    assert r.returncode == 0, r.stderr.decode()


def test_symbol_missing_in_a_library_of_the_module(tmp_path):
    """A library the module links misses a symbol of its own: the message
    keeps dlopen's words, which name that library and the symbol."""
    d = tmp_path / "mods"
    d.mkdir()
    (d / "dep.c").write_text("int dep_missing(void);\nint dep_f(void) { return dep_missing(); }\n")
    r = subprocess.run(["cc", "-shared", "-fPIC", "-o", str(d / "libdep.so"), str(d / "dep.c")],
                       capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    so = calls_module(tmp_path, "uses_dep", "int dep_f(void);", "dep_f() == 0",
                      libs=["-L", str(d), "-Wl,-rpath," + str(d), "-ldep"])
    out = refused(tmp_path, [so], ['dlopen() "%s" failed' % so, str(d / "libdep.so"),
                                   "undefined symbol: dep_missing"])
    assert "which is neither in the SDK" not in out, out


def conf_with(tmp, *sos):
    (tmp / "html").mkdir(exist_ok=True)
    conf = tmp / "scalws.conf"
    conf.write_text(h.render(h.MAIN_TEMPLATE, tmp, [h.free_port()],
                             load="".join("load_module %s;\n" % so for so in sos)))
    return conf


# A module built for the next minor ABI that says it checks optional
# functions itself: it answers /sdk with what sws_sdk_function() found.
OPTIONAL = r"""
#include <scalws/scalws.h>
#include <string.h>

static sws_int_t
sdk_handler(sws_http_request_t *r)
{
    static const sws_str_t  type = sws_string("text/plain");
    __typeof__(&sws_pstrdup) pstrdup = sws_sdk_lookup(sws_pstrdup);
    u_char                 *p;
    sws_str_t               body;
    sws_str_t               probe = sws_string("copied");

    p = sws_pnalloc(sws_http_pool(r), 256);
    if (p == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    body.data = p;
    body.len = sws_slprintf(p, p + 256,
        "missing=%%s palloc=%%s object=%%s empty=%%s typed=%%s",
        sws_sdk_function("sws_no_such_function") == NULL ? "NULL" : "found",
        sws_sdk_function("sws_palloc") == (void *) &sws_palloc ? "same" : "other",
        sws_sdk_function("malloc") == NULL ? "NULL" : "found",
        sws_sdk_function("") == NULL ? "NULL" : "found",
        pstrdup == NULL ? "NULL"
        : memcmp(pstrdup(sws_http_pool(r), &probe), probe.data, probe.len) == 0
        ? "copied" : "wrong") - p;
    return sws_http_send_response(r, SWS_HTTP_OK, &type, &body);
}

/* optional_sdk; in a location */
static char *
set_handler(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    (void) cmd;
    (void) conf;
    if (sws_http_set_content_handler(cf, sdk_handler, "optional_sdk") != SWS_OK) {
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}

static const sws_command_t commands[] = {
    { "optional_sdk", SWS_HTTP_LOC_CONF | SWS_CONF_NOARGS, set_handler,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    .abi_major = SWS_ABI_MAJOR, .abi_minor = SWS_ABI_MINOR + 1, .name = "optional_sdk",
    .commands = commands, .flags = %s,
};
"""


def test_newer_minor_with_flag_loads_and_looks_up(sws, tmp_path):
    so = h.build_module(tmp_path / "mods", "optional_sdk", OPTIONAL % "SWS_MODULE_CHECKS_SDK")
    s = sws(load="load_module %s;" % so, server="        location = /sdk { optional_sdk; }\n")
    r = h.curl(s.url("/sdk"))
    assert r.status == 200, r
    assert r.body == b"missing=NULL palloc=same object=NULL empty=NULL typed=copied", r


def test_newer_minor_without_flag_refused(tmp_path):
    so = h.build_module(tmp_path / "mods", "optional_noflag", OPTIONAL % "0")
    refused(tmp_path, [so], [so, "built for ABI %d.%d" % (h.ABI_MAJOR, h.ABI_MINOR + 1),
                             "has ABI %d.%d" % (h.ABI_MAJOR, h.ABI_MINOR)])


def test_newer_function_called_without_lookup_refused(tmp_path):
    """The flag does not excuse a function linked directly: a module of the
    next minor that calls one this server lacks fails to load naming it."""
    so = calls_module(tmp_path, "future_user", "int sws_future_function(void);",
                      "sws_future_function() == 0",
                      extra=".abi_minor = SWS_ABI_MINOR + 1, .flags = SWS_MODULE_CHECKS_SDK,")
    refused(tmp_path, [so], ['module "%s" uses "sws_future_function"' % so])


def test_no_module_symbol_refused(tmp_path):
    so = h.build_module(tmp_path / "mods", "nosym",
                        "int not_the_module_symbol = 42;\n")
    refused(tmp_path, [so], [so])


def test_duplicate_module_name_refused(tmp_path):
    a = good_module(tmp_path, name="dupmod", fname="dup_a")
    b = good_module(tmp_path, name="dupmod", fname="dup_b")
    out = refused(tmp_path, [a, b], ["dupmod"])
    assert str(a) in out or str(b) in out, out


def test_duplicate_of_in_tree_module_refused(tmp_path):
    """A module named like an in-tree one (respond) is a duplicate."""
    so = h.build_module(tmp_path / "mods", "fake_respond", bare_module("respond"))
    out = refused(tmp_path, [so], ["respond"])
    assert str(so) in out, out


def test_missing_required_module_refused(tmp_path):
    extra = 'static const char *const reqs[] = { "no_such_module_xyz", NULL };\n'
    so = h.build_module(tmp_path / "mods", "needy",
                        bare_module("needy", requires="reqs", extra=extra))
    refused(tmp_path, [so], [so, "no_such_module_xyz"])


def test_requirement_loaded_later_is_ordered(sws, tmp_path):
    """requires orders initialisation; a requirement that is present is fine
    even when its file comes later."""
    extra = 'static const char *const reqs[] = { "zz_provider", NULL };\n'
    a = h.build_module(tmp_path / "mods", "aa_needs",
                       bare_module("aa_needs", requires="reqs", extra=extra))
    b = h.build_module(tmp_path / "mods", "zz_provider", bare_module("zz_provider"))
    s = sws(load="load_module %s;\nload_module %s;" % (a, b))
    assert h.curl(s.url("/respond")).body == b"Hello, world!"


def test_load_module_nonexistent_refused(tmp_path):
    refused(tmp_path, ["/nonexistent.so"], ["/nonexistent.so"])


def test_load_module_not_a_shared_object(tmp_path):
    bogus = tmp_path / "bogus.so"
    bogus.write_text("this is not ELF\n")
    refused(tmp_path, [bogus], [bogus])


def test_null_name_refused(tmp_path):
    src = r"""
#include <scalws/scalws.h>
SWS_EXPORT sws_module_t sws_module = { .abi_major = SWS_ABI_MAJOR,
                                       .abi_minor = SWS_ABI_MINOR, .name = NULL };
"""
    so = h.build_module(tmp_path / "mods", "noname", src)
    refused(tmp_path, [so], [so])


def test_bad_module_in_modules_dir_refused(tmp_path):
    mdir = tmp_path / "modules"
    mdir.mkdir()
    for f in glob.glob(os.path.join(h.MODULES, "*.so")):
        os.symlink(f, mdir / os.path.basename(f))
    so = h.build_module(tmp_path / "mods", "abi_major",
                        bare_module("abi_major", major=str(h.ABI_MAJOR + 1)))
    shutil.copy(so, mdir / "abi_major.so")
    rc, out, listening = h.start_expect_failure(tmp_path, modules=str(mdir))
    assert rc not in (None, 0), out
    assert not listening
    assert "abi_major.so" in out, out


def test_t_reports_bad_module(tmp_path):
    so = h.build_module(tmp_path / "mods", "abi_major",
                        bare_module("abi_major", major=str(h.ABI_MAJOR + 1)))
    (tmp_path / "html").mkdir()
    conf = tmp_path / "scalws.conf"
    conf.write_text(h.render(h.MAIN_TEMPLATE, tmp_path, [h.free_port()],
                             load="load_module %s;" % so))
    r = h.run_scalwsd(["-t", "-p", str(tmp_path) + "/", "-c", str(conf)])
    assert r.returncode != 0, r
    assert str(so) in r.stderr.decode(), r.stderr.decode()


# ---------------------------------------------------------------- contrib/hello-module

HELLO_DIR = Path(h.SRC) / "contrib" / "hello-module"


def modules_dir_without_hello(tmp):
    """The in-tree modules, minus a hello module that configure may have
    built in-tree (loading ours next to it would be a duplicate)."""
    mdir = Path(tmp) / "modules-nohello"
    mdir.mkdir()
    for f in glob.glob(os.path.join(h.MODULES, "*.so")):
        if not os.path.basename(f).startswith("hello"):
            os.symlink(f, mdir / os.path.basename(f))
    h.make_traversable(mdir)
    return mdir


def hello_sources():
    assert HELLO_DIR.is_dir(), "%s does not exist" % HELLO_DIR
    srcs = sorted(HELLO_DIR.glob("*.c"))
    assert srcs, "no .c file in %s" % HELLO_DIR
    return srcs


def test_hello_module_builds_with_cc_and_works(sws, tmp_path):
    srcs = hello_sources()
    so = tmp_path / "mods" / "hello.so"
    so.parent.mkdir()
    r = subprocess.run(["cc", "-std=gnu11", "-shared", "-fPIC", "-O2", "-Wall", "-Wextra",
                        "-Wno-unused-parameter", "-I", h.INCLUDE, "-o", str(so)]
                       + [str(s) for s in srcs],
                       capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    h.make_traversable(so.parent)
    s = sws(load="load_module %s;" % so, modules=modules_dir_without_hello(tmp_path),
            server="""
        location = /hello { hello_header X-Hello world; respond 200 "hi"; }
""")
    r = h.curl(s.url("/hello"))
    assert r.status == 200 and r.header("X-Hello") == "world", r
    assert h.curl(s.url("/respond")).header("X-Hello") is None


def test_hello_module_makefile_pkg_config(sws, tmp_path):
    """make install DESTDIR=..., then the example's own Makefile finds the
    SDK with pkg-config."""
    hello_sources()
    assert (HELLO_DIR / "Makefile").exists(), "contrib/hello-module/Makefile missing"
    top = Path(h.SRC)
    dest = tmp_path / "dest"
    r = subprocess.run(["make", "-C", str(top), "install", "DESTDIR=%s" % dest],
                       capture_output=True, timeout=300)
    assert r.returncode == 0, (r.stdout.decode()[-3000:], r.stderr.decode()[-3000:])
    pcs = list(dest.rglob("*.pc"))
    assert pcs, "make install put no .pc file under %s" % dest
    headers = list(dest.rglob("scalws.h"))
    assert headers, "make install put no scalws.h under %s" % dest
    work = tmp_path / "hello"
    shutil.copytree(HELLO_DIR, work)
    env = dict(os.environ)
    env["PKG_CONFIG_PATH"] = ":".join(sorted({str(p.parent) for p in pcs}))
    env["PKG_CONFIG_SYSROOT_DIR"] = str(dest)
    r = subprocess.run(["make", "-C", str(work)], capture_output=True, timeout=120, env=env)
    assert r.returncode == 0, (r.stdout.decode()[-3000:], r.stderr.decode()[-3000:])
    sos = list(work.rglob("*.so"))
    assert sos, "the example's Makefile built no .so"
    h.make_traversable(work)
    s = sws(load="load_module %s;" % sos[0], modules=modules_dir_without_hello(tmp_path),
            server="""
        location = /hello { hello_header X-Hello pkg; respond 200 "hi"; }
""")
    r = h.curl(s.url("/hello"))
    assert r.status == 200 and r.header("X-Hello") == "pkg", r
