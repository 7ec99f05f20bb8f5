"""The closed ABI: scalwsd exports exactly what include/scalws declares.

auto/sdk_symbols reads the SDK headers; the build makes a version script and
a name table of what it finds. These tests check the real binary against the
real headers, and the reader itself on headers written to trip it up."""
import subprocess
from pathlib import Path

import swsharness as h

GENERATOR = Path(h.SRC) / "auto" / "sdk_symbols"


def sdk_list(include):
    r = subprocess.run(["sh", str(GENERATOR), "list", "cc", str(include)],
                       capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    names = {}
    for line in r.stdout.decode().splitlines():
        name, kind = line.split()
        names[name] = kind
    return names


def copy_relocated(binary):
    """Addresses of the objects of a library that the executable holds a
    copy of (stdout of libc, an ASan option of libasan): defined in its
    dynamic table for the library's sake, with an R_*_COPY relocation."""
    r = subprocess.run(["readelf", "-rW", str(binary)], capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    addrs = set()
    for line in r.stdout.decode().splitlines():
        f = line.split()
        if len(f) >= 5 and f[2].endswith("_COPY"):
            addrs.add(int(f[0], 16))
    return addrs


def dynamic_symbols(binary):
    """Defined names of the dynamic symbol table: (ours, the copies). A copy
    may have aliases (__environ and environ): they share its address."""
    r = subprocess.run(["nm", "-D", "--defined-only", str(binary)],
                       capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    copied = copy_relocated(binary)
    ours, copies = set(), set()
    for line in r.stdout.decode().splitlines():
        f = line.split()
        (copies if int(f[0], 16) in copied else ours).add(f[-1])
    return ours, copies


def test_scalwsd_exports_exactly_the_sdk():
    declared = sdk_list(h.INCLUDE)
    assert len(declared) > 100, declared
    for f in ("sws_palloc", "sws_http_send_response", "sws_sdk_function",
              "sws_http_upstream_create", "sws_log_error"):
        assert declared.get(f) == "function", f
    ours, copies = dynamic_symbols(h.SCALWSD)
    missing = sorted(set(declared) - ours)
    extra = sorted(ours - set(declared))
    assert not missing, "declared in include/scalws but not exported: %s" % missing
    assert not extra, "exported but not in the SDK: %s" % extra
    # retired in ABI 1.7: a request has a session, not a connection
    assert "sws_http_connection" not in declared and "sws_http_connection" not in ours
    # nothing of the libraries scalwsd links is offered to modules
    for name in ours | copies:
        assert not name.startswith(("SSL_", "OPENSSL_", "nghttp2_", "yaml_", "pcre2_")), name


TRICKY_A = r"""
/* A header written to trip the reader: the comment says
 * int sws_in_comment(void);  */
#ifndef A_H
#define A_H
#include <stddef.h>
#include <stdio.h>

#define SWS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define sws_macro_fn(x)  ((x) + 1)
#define SWS_DECLARE(name)  int name(int)
#define SWS_CONST  42

typedef int (*sws_callback_pt)(void *data, int (*inner)(int));
typedef struct {
    int    (*member_fn)(int);
    void   (*other)(void);
} sws_table_t;
struct sws_thing_s { int a; int (*f)(void); };
enum sws_kind { SWS_A, SWS_B = 2 };
typedef enum { SWS_C } sws_kind_t;

int sws_simple(void);
void *
sws_multi_line(sws_table_t *t,
               const char *name,
               size_t len);
void sws_printf_like(const char *fmt, ...) SWS_PRINTF(1, 2);
__attribute__((deprecated("use x(); { instead"))) int sws_deprecated(int);
extern int sws_extern_fn(int);
SWS_DECLARE(sws_by_macro);
sws_callback_pt sws_returns_fn_ptr(sws_callback_pt cb);
void (*sws_old_style_signal(int sig, void (*h)(int)))(int);

static inline int
sws_inline_helper(int x)
{
    int y = x; { y++; }
    return sws_macro_fn(y);
}
static int sws_static_decl(int);
inline int sws_plain_inline(int x) { return x; }

extern int sws_counter;
extern const char *const sws_names[SWS_CONST];
extern sws_table_t sws_table_a, *sws_table_b;
extern int (*sws_hook)(int (*cb)(void));
extern struct sws_thing_s sws_thing;

int sws_tentative_not_extern;
_Static_assert(sizeof(int) >= 2, "int; is big");
#if 0
int sws_disabled(void);
#endif
#ifdef __cplusplus
extern "C" { int sws_cplusplus_only(void); }
#endif
#endif
"""

TRICKY_B = r"""
#include <scalws/a.h>
int sws_from_b(sws_table_t *t);
"""


def test_reader_on_tricky_headers(tmp_path):
    inc = tmp_path / "include"
    (inc / "scalws").mkdir(parents=True)
    (inc / "scalws" / "a.h").write_text(TRICKY_A)
    (inc / "scalws" / "b.h").write_text(TRICKY_B)
    got = sdk_list(inc)
    want = {
        "sws_simple": "function", "sws_multi_line": "function",
        "sws_printf_like": "function", "sws_deprecated": "function",
        "sws_extern_fn": "function", "sws_by_macro": "function",
        "sws_returns_fn_ptr": "function", "sws_old_style_signal": "function",
        "sws_from_b": "function",
        "sws_counter": "object", "sws_names": "object", "sws_table_a": "object",
        "sws_table_b": "object", "sws_hook": "object", "sws_thing": "object",
    }
    assert got == want, "extra %s, missing %s" % (
        sorted(set(got) - set(want)), sorted(set(want) - set(got)))
    # nothing of <stdio.h> either
    assert "printf" not in got and "fopen" not in got


def test_reader_fails_on_a_broken_header(tmp_path):
    inc = tmp_path / "include"
    (inc / "scalws").mkdir(parents=True)
    (inc / "scalws" / "a.h").write_text('#include "does_not_exist.h"\nint sws_x(void);\n')
    r = subprocess.run(["sh", str(GENERATOR), "list", "cc", str(inc)],
                       capture_output=True, timeout=60)
    assert r.returncode != 0
    assert b"preprocessing" in r.stderr, r.stderr


def test_declared_function_without_definition_fails_the_link(tmp_path):
    """The name table refers to every declared name, so a function that a
    header declares and nobody defines stops the build, naming it."""
    inc = tmp_path / "include"
    (inc / "scalws").mkdir(parents=True)
    (inc / "scalws" / "x.h").write_text(
        "int sws_defined(void);\nint sws_forgotten(void);\nextern int sws_value;\n")
    lst = tmp_path / "sdk.list"
    r = subprocess.run(["sh", str(GENERATOR), "list", "cc", str(inc)],
                       capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    lst.write_bytes(r.stdout)
    r = subprocess.run(["sh", str(GENERATOR), "table", str(lst), str(inc)],
                       capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    (tmp_path / "table.c").write_bytes(r.stdout)
    main = tmp_path / "main.c"
    main.write_text("#include <scalws/x.h>\n#include \"sws_sdk.h\"\n"
                    "int sws_defined(void) { return 1; }\nint sws_value = 2;\n"
                    "int main(void) { return (int) sws_sdk_symbols_n; }\n")
    cmd = ["cc", "-std=gnu11", "-I", str(inc), "-I", str(h.INCLUDE),
           "-I", str(Path(h.SRC) / "src" / "core"),
           "-o", str(tmp_path / "a.out"), str(main), str(tmp_path / "table.c")]
    r = subprocess.run(cmd, capture_output=True, timeout=60)
    assert r.returncode != 0
    assert b"sws_forgotten" in r.stderr, r.stderr
    # defined, it links, and the table holds the three names
    main.write_text(main.read_text() + "int sws_forgotten(void) { return 3; }\n")
    r = subprocess.run(cmd, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    r = subprocess.run([str(tmp_path / "a.out")], timeout=10)
    assert r.returncode == 3
