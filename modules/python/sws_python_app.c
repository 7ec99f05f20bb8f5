/*
 * python_app NAME { ... }: a Python web application run by the master
 * under uvicorn, gunicorn or the native bridge's runner, one server
 * process per slot, each on a unix socket of its own (<scalws/sws_app.h>).
 *
 *   python_app NAME {
 *       root DIR;  asgi MODULE:APP | wsgi MODULE:APP;
 *       server uvicorn | gunicorn | native;  python PROGRAM;  venv DIR;  arg ARG;
 *       processes N | MIN..MAX;  idle_timeout T;  env NAME VALUE;  user USER [GROUP];
 *       run_dir DIR;  start_timeout T;  stop_timeout T;
 *       max_requests N;  max_memory SIZE;
 *   }
 *
 * uvicorn:  PYTHON -m uvicorn --uds PATH --no-access-log [--interface wsgi] MODULE:APP
 * gunicorn: PYTHON -m gunicorn --bind unix:PATH --workers 1
 *           [--worker-class uvicorn.workers.UvicornWorker] MODULE:APP
 * native:   PYTHON -m scalws_bridge --socket=PATH --workers 1
 *           --interface asgi|wsgi --app MODULE:APP, with PYTHONPATH the
 *           runner's package (python/ beside the modules' directory: the
 *           build's objs/python, PREFIX/python installed); locations reach
 *           it with python_bridge_pass NAME (docs/python-bridge.md)
 *
 * PYTHON: venv's bin/python3, else /usr/bin/python3. glibc's malloc gets
 * fixed thresholds unless the block's env sets a MALLOC_* variable itself:
 * its adaptive mmap threshold was measured to cost uvicorn 5-7 % per
 * request. PYTHONUNBUFFERED=1 brings print()'s lines to the error log as
 * they are written.
 */
#define _GNU_SOURCE                 /* dladdr */
#include <dlfcn.h>
#include "sws_python_module.h"

#define SWS_PYTHON_UVICORN   1
#define SWS_PYTHON_GUNICORN  2
#define SWS_PYTHON_NATIVE    3

typedef struct {
    sws_app_t   *app;
    sws_str_t    callable;       /* module:app */
    unsigned     asgi:1;
    unsigned     wsgi:1;
    sws_uint_t   server;         /* 0: the default (uvicorn for ASGI, gunicorn for WSGI) */
    sws_str_t    python;
    sws_str_t    venv;
    sws_array_t *args;           /* sws_str_t */
} sws_python_app_t;

static char *
sws_python_one(sws_conf_t *cf, sws_str_t *dst)
{
    if (sws_conf_nargs(cf) != 2) {
        return "takes one argument";
    }
    if (dst->data != NULL) {
        return "is duplicate";
    }
    *dst = *sws_conf_arg(cf, 1);
    return dst->len ? SWS_CONF_OK : "takes a non-empty argument";
}

static char *
sws_python_entry(sws_conf_t *cf, void *data)
{
    sws_python_app_t *pa = data;
    sws_str_t        *w = sws_conf_arg(cf, 0), *a;
    char             *rv;

    if (sws_app_entry(cf, pa->app, &rv)) {
        return rv;
    }
    if (sws_str_eq_cstr(w, "asgi") || sws_str_eq_cstr(w, "wsgi")) {
        rv = sws_python_one(cf, &pa->callable);
        if (rv != SWS_CONF_OK) {
            return pa->asgi || pa->wsgi ? "is duplicate: one asgi or wsgi" : rv;
        }
        if (memchr(pa->callable.data, ':', pa->callable.len) == NULL) {
            return "takes MODULE:CALLABLE";
        }
        if (w->data[0] == 'a') {
            pa->asgi = 1;
        } else {
            pa->wsgi = 1;
        }
        return SWS_CONF_OK;
    }
    if (sws_str_eq_cstr(w, "server")) {
        if (sws_conf_nargs(cf) != 2) {
            return "takes one argument";
        }
        if (pa->server) {
            return "is duplicate";
        }
        a = sws_conf_arg(cf, 1);
        if (sws_str_eq_cstr(a, "uvicorn")) {
            pa->server = SWS_PYTHON_UVICORN;
        } else if (sws_str_eq_cstr(a, "gunicorn")) {
            pa->server = SWS_PYTHON_GUNICORN;
        } else if (sws_str_eq_cstr(a, "native")) {
            pa->server = SWS_PYTHON_NATIVE;
        } else {
            return "takes uvicorn, gunicorn or native";
        }
        return SWS_CONF_OK;
    }
    if (sws_str_eq_cstr(w, "python")) {
        return sws_python_one(cf, &pa->python);
    }
    if (sws_str_eq_cstr(w, "venv")) {
        rv = sws_python_one(cf, &pa->venv);
        if (rv == SWS_CONF_OK && sws_conf_full_name(cf, &pa->venv, 0) != SWS_OK) {
            return SWS_CONF_ERROR;
        }
        return rv;
    }
    if (sws_str_eq_cstr(w, "arg")) {
        if (sws_conf_nargs(cf) != 2) {
            return "takes one argument";
        }
        a = sws_array_push(pa->args);
        if (a == NULL) {
            return SWS_CONF_ERROR;
        }
        *a = *sws_conf_arg(cf, 1);
        return SWS_CONF_OK;
    }
    sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "unknown directive \"%.*s\" in python_app",
                       (int) w->len, w->data);
    return SWS_CONF_ERROR;
}

/* Constant arguments, NULL-terminated. */
static sws_int_t
sws_python_args(sws_app_t *app, const char *const *args)
{
    sws_str_t  s;

    for ( ; *args; args++) {
        s.data = (u_char *) *args;
        s.len = strlen(*args);
        if (sws_app_add_arg(app, &s) != SWS_OK) {
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}

static sws_int_t
sws_python_env(sws_app_t *app, const char *name, const char *value)
{
    sws_str_t  n, v;

    n.data = (u_char *) name;
    n.len = strlen(name);
    v.data = (u_char *) value;
    v.len = strlen(value);
    return sws_app_set_env(app, &n, &v);
}

/* The native runner's package: python/ beside the directory this module
 * was loaded from (objs/modules -> objs/python; PREFIX/modules ->
 * PREFIX/python, as make install puts it). */
static sws_int_t
sws_python_bridge_path(sws_conf_t *cf, sws_str_t *path)
{
    Dl_info       info;
    const char   *so, *slash;
    size_t        dir;
    sws_str_t     rel = sws_string("/../python");

    if (dladdr(&sws_module, &info) == 0 || info.dli_fname == NULL
        || (slash = strrchr(info.dli_fname, '/')) == NULL)
    {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                           "python_app: where the python module was loaded from is unknown");
        return SWS_ERROR;
    }
    so = info.dli_fname;
    dir = (size_t) (slash - so);
    path->len = dir + rel.len;
    path->data = sws_pnalloc(sws_conf_pool(cf), path->len);
    if (path->data == NULL) {
        return SWS_ERROR;
    }
    memcpy(sws_cpymem(path->data, so, dir), rel.data, rel.len);
    return SWS_OK;
}

static sws_int_t
sws_python_native(sws_conf_t *cf, sws_python_app_t *pa)
{
    static const char *const  runner[] = { "-m", "scalws_bridge", "--workers", "1",
                                           "--interface", NULL };
    static const sws_str_t    sock = sws_string("--socket="),
                              asgi = sws_string("asgi"), wsgi = sws_string("wsgi"),
                              pythonpath = sws_string("PYTHONPATH");
    sws_str_t                 path;

    if (sws_python_args(pa->app, runner) != SWS_OK
        || sws_app_add_arg(pa->app, pa->asgi ? &asgi : &wsgi) != SWS_OK
        || sws_app_add_socket_arg(pa->app, &sock) != SWS_OK
        || sws_python_bridge_path(cf, &path) != SWS_OK)
    {
        return SWS_ERROR;
    }
    /* the block's env PYTHONPATH wins (a runner installed elsewhere) */
    return sws_app_set_env(pa->app, &pythonpath, &path);
}

static sws_int_t
sws_python_command(sws_conf_t *cf, sws_python_app_t *pa)
{
    static const char *const  uvicorn[] = { "-m", "uvicorn", "--no-access-log", NULL };
    static const char *const  uvicorn_wsgi[] = { "--interface", "wsgi", NULL };
    static const char *const  gunicorn[] = { "-m", "gunicorn", "--workers", "1", NULL };
    static const char *const  gunicorn_asgi[] = { "--worker-class",
                                                  "uvicorn.workers.UvicornWorker", NULL };
    static const sws_str_t    uds = sws_string("--uds="), bind = sws_string("--bind=unix:");
    sws_str_t                 python, app, *a;
    sws_uint_t                i;
    u_char                   *p;

    if (pa->python.data) {
        python = pa->python;
    } else if (pa->venv.data) {
        python.len = pa->venv.len + sizeof("/bin/python3") - 1;
        python.data = sws_pnalloc(sws_conf_pool(cf), python.len);
        if (python.data == NULL) {
            return SWS_ERROR;
        }
        p = sws_cpymem(python.data, pa->venv.data, pa->venv.len);
        memcpy(p, "/bin/python3", sizeof("/bin/python3") - 1);
    } else {
        sws_str_set(&python, "/usr/bin/python3");
    }
    if (sws_app_set_program(pa->app, &python) != SWS_OK) {
        return SWS_ERROR;
    }
    if (pa->server == SWS_PYTHON_NATIVE) {
        /* python_pass to it (HTTP) is refused: the bridge's framing only */
        sws_app_set_protocol(pa->app, "python-bridge", "python_bridge_pass");
        if (sws_python_native(cf, pa) != SWS_OK) {
            return SWS_ERROR;
        }
    } else if (pa->server == SWS_PYTHON_UVICORN) {
        if (sws_python_args(pa->app, uvicorn) != SWS_OK
            || sws_app_add_socket_arg(pa->app, &uds) != SWS_OK
            || (pa->wsgi && sws_python_args(pa->app, uvicorn_wsgi) != SWS_OK))
        {
            return SWS_ERROR;
        }
    } else {
        if (sws_python_args(pa->app, gunicorn) != SWS_OK
            || sws_app_add_socket_arg(pa->app, &bind) != SWS_OK
            || (pa->asgi && sws_python_args(pa->app, gunicorn_asgi) != SWS_OK))
        {
            return SWS_ERROR;
        }
    }
    for (i = 0, a = pa->args->elts; i < pa->args->nelts; i++) {
        if (sws_app_add_arg(pa->app, &a[i]) != SWS_OK) {
            return SWS_ERROR;
        }
    }
    if (pa->server == SWS_PYTHON_NATIVE) {
        /* the runner takes it as --app=MODULE:APP */
        p = sws_pnalloc(sws_conf_pool(cf), sizeof("--app=") - 1 + pa->callable.len);
        if (p == NULL) {
            return SWS_ERROR;
        }
        app.data = p;
        p = sws_cpymem(p, "--app=", sizeof("--app=") - 1);
        p = sws_cpymem(p, pa->callable.data, pa->callable.len);
        app.len = (size_t) (p - app.data);
        if (sws_app_add_arg(pa->app, &app) != SWS_OK) {
            return SWS_ERROR;
        }
    } else if (sws_app_add_arg(pa->app, &pa->callable) != SWS_OK) {
        return SWS_ERROR;
    }

    if (pa->venv.data) {
        sws_str_t n = sws_string("VIRTUAL_ENV");

        if (sws_app_set_env(pa->app, &n, &pa->venv) != SWS_OK) {
            return SWS_ERROR;
        }
    }
    if (!sws_app_env_set(pa->app, "MALLOC_")
        && (sws_python_env(pa->app, "MALLOC_MMAP_THRESHOLD_", "524288") != SWS_OK
            || sws_python_env(pa->app, "MALLOC_TRIM_THRESHOLD_", "1048576") != SWS_OK))
    {
        return SWS_ERROR;
    }
    return sws_python_env(pa->app, "PYTHONUNBUFFERED", "1");
}

char *
sws_python_app(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_python_app_t  *pa;
    sws_str_t          name = *sws_conf_arg(cf, 1);
    char              *rv;

    (void) cmd; (void) conf;
    pa = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_python_app_t));
    if (pa == NULL
        || (pa->args = sws_array_create(sws_conf_pool(cf), 4, sizeof(sws_str_t))) == NULL)
    {
        return SWS_CONF_ERROR;
    }
    pa->app = sws_app_add(cf, &name, "python");
    if (pa->app == NULL) {
        return SWS_CONF_ERROR;
    }
    rv = sws_conf_parse_entries(cf, sws_python_entry, pa);
    if (rv != SWS_CONF_OK) {
        return rv;
    }
    if (!pa->asgi && !pa->wsgi) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "python_app \"%.*s\" needs asgi or wsgi",
                           (int) name.len, name.data);
        return SWS_CONF_ERROR;
    }
    if (pa->server == 0) {
        pa->server = pa->asgi ? SWS_PYTHON_UVICORN : SWS_PYTHON_GUNICORN;
    }
    if (sws_python_command(cf, pa) != SWS_OK) {
        return SWS_CONF_ERROR;
    }
    return sws_app_done(cf, pa->app) == SWS_OK ? SWS_CONF_OK : SWS_CONF_ERROR;
}
