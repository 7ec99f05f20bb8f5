/*
 * Managed applications (<scalws/sws_app.h>): an application's block read
 * into a definition, then declared as one helper process per slot, each on
 * a unix socket of its own, behind an upstream group of the application's
 * name with room for run-time servers only.
 *
 * The helpers' names carry a hash of the whole definition,
 * "NAME-1a2b3c4d.K": a reload with the same block declares the same names
 * and the core keeps the processes; a changed block declares new names and
 * new sockets, and the slot ("NAME.K", sws_helper_set_slot) keeps each old
 * process running until its new one is ready. The ready callback of a
 * process puts its socket in the group and takes out the old process of
 * its slot; the exit callback takes it out again. Both run in the master.
 */
#include <pwd.h>
#include <stdio.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "sws_http_upstream.h"
#include "sws_helper_internal.h"
#include "sws_core_module.h"
#include "sws_times_internal.h"

#define SWS_APP_NAME_MAX       16
#define SWS_APP_PROCESSES_MAX  64
#define SWS_APP_START_TIMEOUT  30000
#define SWS_APP_STOP_TIMEOUT   10000
#define SWS_APP_IDLE_TIMEOUT   10000
#define SWS_APP_ADDR_MAX       128      /* "unix:" and a socket path */

struct sws_app_s {
    sws_str_t           name;
    const char         *kind;
    const char         *file;
    sws_uint_t          line;
    sws_pool_t         *pool;

    sws_str_t           root;            /* absolute; empty: none */
    sws_uint_t          processes;       /* 0: not set (1); MIN..MAX: MAX */
    sws_uint_t          min;             /* MIN..MAX: MIN; else processes */
    sws_msec_t          idle_timeout;    /* MIN..MAX: spare capacity this long stops one */
    sws_array_t         env;             /* sws_str_t pairs: the block's */
    sws_array_t         module_env;      /* sws_str_t pairs: the module's */
    sws_str_t           user;
    sws_str_t           group;
    sws_str_t           run_dir;         /* absolute */
    sws_msec_t          start_timeout;
    sws_msec_t          stop_timeout;
    sws_uint_t          max_requests;    /* 0: none */
    size_t              max_memory;      /* resident bytes; 0: none */
    sws_uint_t          keepalive;       /* the group's; SWS_UNSET_UINT: its default */
    sws_uint_t          balance;         /* the group's SWS_UPS_* method; 0: round robin */

    sws_str_t           program;
    sws_array_t         args;            /* sws_app_arg_t */
    sws_str_t           socket_env;      /* empty: none */
    const char         *protocol;        /* NULL: "http" */
    const char         *pass;            /* NULL: KIND_pass */
    unsigned            done:1;
};

typedef struct {
    sws_str_t           text;            /* the argument, or the prefix of */
    unsigned            socket:1;        /* ... the socket path */
} sws_app_arg_t;

/* What the callbacks of one process need (the configuration's pool). */
typedef struct sws_app_proc_s  sws_app_proc_t;
struct sws_app_proc_s {
    sws_str_t           group;
    sws_str_t           addr;            /* "unix:/run/NAME-1a2b3c4d.0.sock" */
    sws_str_t           prefix;          /* "unix:/run/NAME-": this application's */
    sws_str_t           slot;            /* ".0.": this slot's, after the hash */
    sws_helper_t       *helper;
    sws_app_proc_t     *twin;            /* recycling: the slot's other helper */
    sws_uint_t          nslots;          /* the definition's processes (MAX) */
    sws_uint_t          nfixed;          /* ... started with it (MIN) */
    sws_uint_t          k;               /* its slot */
    struct sws_app_scale_s  *scale;      /* MIN..MAX */
    sws_uint_t          max_requests;
    size_t              max_memory;
    sws_msec_t          stop_timeout;
    sws_msec_t          retire_until;    /* retire: its requests in flight get until then */
    unsigned            replacing:1;     /* its twin was started to replace it */
    unsigned            retire:1;        /* replaced: stopped at a watch once it has no
                                            request in flight */
    unsigned            by_twin:1;       /* retire: its twin replaced it (recycling) */
};

/* The watch interval of recycling and scaling. */
#define SWS_APP_WATCH  1000

/* processes MIN..MAX: what the application's processes share. */
typedef struct sws_app_scale_s {
    sws_str_t           group;
    sws_uint_t          min;
    sws_uint_t          max;
    sws_msec_t          idle_timeout;
    sws_app_proc_t    **slots;           /* each slot's first helper */
    sws_msec_t          last;            /* the last look */
    sws_msec_t          spare_since;     /* 0: no capacity to spare */
} sws_app_scale_t;


sws_app_t *
sws_app_add(sws_conf_t *cf, const sws_str_t *name, const char *kind)
{
    sws_app_t   *app;
    sws_uint_t   i;

    for (i = 0; i < name->len; i++) {
        u_char c = name->data[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
              || c == '_' || c == '-'))
        {
            break;
        }
    }
    if (name->len == 0 || name->len > SWS_APP_NAME_MAX || i < name->len) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid application name \"%.*s\": 1 to "
                           "%d letters, digits, \"_\" or \"-\"", (int) name->len, name->data,
                           SWS_APP_NAME_MAX);
        return NULL;
    }
    app = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_app_t));
    if (app == NULL
        || sws_array_init(&app->env, sws_conf_pool(cf), 4, sizeof(sws_str_t)) != SWS_OK
        || sws_array_init(&app->module_env, sws_conf_pool(cf), 4, sizeof(sws_str_t)) != SWS_OK
        || sws_array_init(&app->args, sws_conf_pool(cf), 8, sizeof(sws_app_arg_t)) != SWS_OK)
    {
        return NULL;
    }
    app->name = *name;
    app->kind = kind;
    app->file = sws_conf_file(cf);
    app->line = sws_conf_line(cf);
    app->pool = sws_conf_pool(cf);
    app->start_timeout = SWS_UNSET_MSEC;
    app->stop_timeout = SWS_UNSET_MSEC;
    app->idle_timeout = SWS_UNSET_MSEC;
    app->keepalive = SWS_UNSET_UINT;
    return app;
}


const sws_str_t *
sws_app_name(sws_app_t *app)
{
    return &app->name;
}


const sws_str_t *
sws_app_root(sws_app_t *app)
{
    return &app->root;
}


int
sws_app_env_set(sws_app_t *app, const char *prefix)
{
    sws_str_t  *e = app->env.elts;
    size_t      len = strlen(prefix);
    sws_uint_t  i;

    for (i = 0; i < app->env.nelts; i += 2) {
        if (e[i].len >= len && memcmp(e[i].data, prefix, len) == 0) {
            return 1;
        }
    }
    return 0;
}


/* A path of the block, made absolute against the prefix. */
static char *
sws_app_path(sws_conf_t *cf, sws_str_t *dst, const char *what)
{
    if (dst->data != NULL) {
        return "is duplicate";
    }
    *dst = *sws_conf_arg(cf, 1);
    if (dst->len == 0) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s needs a directory", what);
        return SWS_CONF_ERROR;
    }
    while (dst->len > 1 && dst->data[dst->len - 1] == '/') {
        dst->len--;
    }
    return sws_conf_full_name(cf, dst, 0) == SWS_OK ? SWS_CONF_OK : SWS_CONF_ERROR;
}


static char *
sws_app_time(sws_conf_t *cf, sws_msec_t *t)
{
    if (*t != SWS_UNSET_MSEC) {
        return "is duplicate";
    }
    *t = sws_parse_time_ms(sws_conf_arg(cf, 1));
    return *t <= 0 ? "has an invalid time" : SWS_CONF_OK;
}


static sws_int_t
sws_app_push_pair(sws_array_t *a, const sws_str_t *name, const sws_str_t *value)
{
    sws_str_t  *e = sws_array_push_n(a, 2);

    if (e == NULL) {
        return SWS_ERROR;
    }
    e[0] = *name;
    e[1] = *value;
    return SWS_OK;
}


int
sws_app_entry(sws_conf_t *cf, sws_app_t *app, char **rv)
{
    sws_str_t   *w = sws_conf_arg(cf, 0), *a1;
    sws_uint_t   n = sws_conf_nargs(cf);
    sws_int_t    k, m;
    u_char      *dots;

    a1 = n > 1 ? sws_conf_arg(cf, 1) : NULL;
    *rv = SWS_CONF_OK;

#define SWS_APP_ARGS(min, max)                                                 \
    if (n < (min) + 1 || n > (max) + 1) {                                      \
        *rv = "has an invalid number of arguments";                            \
        return 1;                                                              \
    }

    if (sws_str_eq_cstr(w, "root")) {
        SWS_APP_ARGS(1, 1);
        *rv = sws_app_path(cf, &app->root, "root");
        return 1;
    }
    if (sws_str_eq_cstr(w, "run_dir")) {
        SWS_APP_ARGS(1, 1);
        *rv = sws_app_path(cf, &app->run_dir, "run_dir");
        return 1;
    }
    if (sws_str_eq_cstr(w, "processes")) {
        SWS_APP_ARGS(1, 1);
        if (app->processes) {
            *rv = "is duplicate";
            return 1;
        }
        for (dots = a1->data; dots + 1 < a1->data + a1->len; dots++) {
            if (dots[0] == '.' && dots[1] == '.') {
                break;
            }
        }
        if (dots + 1 >= a1->data + a1->len) {
            dots = NULL;
        }
        k = sws_atoi(a1->data, dots ? (size_t) (dots - a1->data) : a1->len);
        m = dots ? sws_atoi(dots + 2, a1->len - (dots + 2 - a1->data)) : k;
        if (k < 1 || m < k || m > SWS_APP_PROCESSES_MAX) {
            *rv = "takes N or MIN..MAX processes, from 1 to 64";
            return 1;
        }
        app->min = (sws_uint_t) k;
        app->processes = (sws_uint_t) m;
        return 1;
    }
    if (sws_str_eq_cstr(w, "env")) {
        SWS_APP_ARGS(2, 2);
        if (a1->len == 0 || memchr(a1->data, '=', a1->len) != NULL
            || memchr(a1->data, '\0', a1->len) != NULL)
        {
            *rv = "has an invalid variable name";
            return 1;
        }
        if (sws_app_push_pair(&app->env, a1, sws_conf_arg(cf, 2)) != SWS_OK) {
            *rv = SWS_CONF_ERROR;
        }
        return 1;
    }
    if (sws_str_eq_cstr(w, "user")) {
        SWS_APP_ARGS(1, 2);
        if (app->user.data != NULL) {
            *rv = "is duplicate";
            return 1;
        }
        app->user = *a1;
        if (n > 2) {
            app->group = *sws_conf_arg(cf, 2);
        }
        return 1;
    }
    if (sws_str_eq_cstr(w, "start_timeout")) {
        SWS_APP_ARGS(1, 1);
        *rv = sws_app_time(cf, &app->start_timeout);
        return 1;
    }
    if (sws_str_eq_cstr(w, "stop_timeout")) {
        SWS_APP_ARGS(1, 1);
        *rv = sws_app_time(cf, &app->stop_timeout);
        return 1;
    }
    if (sws_str_eq_cstr(w, "idle_timeout")) {
        SWS_APP_ARGS(1, 1);
        *rv = sws_app_time(cf, &app->idle_timeout);
        return 1;
    }
    if (sws_str_eq_cstr(w, "max_requests")) {
        SWS_APP_ARGS(1, 1);
        k = sws_atoi(a1->data, a1->len);
        *rv = app->max_requests ? "is duplicate" : k <= 0 ? "takes a number above 0"
              : SWS_CONF_OK;
        app->max_requests = k > 0 ? (sws_uint_t) k : 0;
        return 1;
    }
    if (sws_str_eq_cstr(w, "max_memory")) {
        SWS_APP_ARGS(1, 1);
        k = sws_parse_size(a1);
        *rv = app->max_memory ? "is duplicate" : k <= 0 ? "takes a size above 0"
              : SWS_CONF_OK;
        app->max_memory = k > 0 ? (size_t) k : 0;
        return 1;
    }
    if (sws_str_eq_cstr(w, "keepalive")) {
        /* the upstream block's keepalive for the application's group: a
         * cache smaller than the requests in flight closes and reopens
         * connections to the application all the time */
        SWS_APP_ARGS(1, 1);
        k = sws_atoi(a1->data, a1->len);
        *rv = app->keepalive != SWS_UNSET_UINT ? "is duplicate"
              : k < 0 ? "takes a number of connections" : SWS_CONF_OK;
        if (*rv == SWS_CONF_OK) {
            app->keepalive = (sws_uint_t) k;
        }
        return 1;
    }
    if (sws_str_eq_cstr(w, "ip_hash") || sws_str_eq_cstr(w, "least_conn")) {
        /* the group's balancing, as in an upstream block: ip_hash keeps a
         * client on one process (Socket.IO's long polling needs that) */
        SWS_APP_ARGS(0, 0);
        *rv = app->balance ? "load balancing method redefined" : SWS_CONF_OK;
        app->balance = w->len == 7 ? SWS_UPS_IP_HASH : SWS_UPS_LEAST_CONN;
        return 1;
    }
#undef SWS_APP_ARGS
    return 0;
}


sws_int_t
sws_app_set_program(sws_app_t *app, const sws_str_t *path)
{
    if (path->len == 0) {
        return SWS_ERROR;
    }
    app->program = *path;
    return SWS_OK;
}


static sws_int_t
sws_app_push_arg(sws_app_t *app, const sws_str_t *text, unsigned socket)
{
    sws_app_arg_t  *a = sws_array_push(&app->args);

    if (a == NULL) {
        return SWS_ERROR;
    }
    a->text = *text;
    a->socket = socket;
    return SWS_OK;
}


sws_int_t
sws_app_add_arg(sws_app_t *app, const sws_str_t *arg)
{
    return sws_app_push_arg(app, arg, 0);
}


sws_int_t
sws_app_add_socket_arg(sws_app_t *app, const sws_str_t *prefix)
{
    return sws_app_push_arg(app, prefix, 1);
}


sws_int_t
sws_app_set_socket_env(sws_app_t *app, const sws_str_t *name)
{
    if (name->len == 0 || memchr(name->data, '=', name->len) != NULL) {
        return SWS_ERROR;
    }
    app->socket_env = *name;
    return SWS_OK;
}


sws_int_t
sws_app_set_env(sws_app_t *app, const sws_str_t *name, const sws_str_t *value)
{
    return sws_app_push_pair(&app->module_env, name, value);
}


/* ------------------------------------------------------------ protocols */

void
sws_app_set_protocol(sws_app_t *app, const char *protocol, const char *pass)
{
    app->protocol = protocol;
    app->pass = pass;
}


sws_int_t
sws_app_expect_protocol(sws_conf_t *cf, const sws_str_t *name, const char *protocol)
{
    sws_http_upstream_main_conf_t *umcf;
    sws_app_pass_t                *p;
    const sws_str_t               *directive = sws_conf_arg(cf, 0);

    umcf = sws_conf_http_main_conf(cf, &sws_http_upstream_module);
    if (umcf == NULL || (p = sws_array_push(&umcf->app_passes)) == NULL) {
        return SWS_ERROR;
    }
    /* the parser's arguments do not outlive the directive */
    p->name.data = sws_pstrdup(sws_conf_pool(cf), name);
    p->directive.data = sws_pstrdup(sws_conf_pool(cf), directive);
    if (p->name.data == NULL || p->directive.data == NULL) {
        return SWS_ERROR;
    }
    p->name.len = name->len;
    p->directive.len = directive->len;
    p->protocol = protocol;
    p->file = sws_conf_file(cf);
    p->line = sws_conf_line(cf);
    return SWS_OK;
}


sws_int_t
sws_app_check_passes(sws_conf_t *cf, sws_http_upstream_main_conf_t *umcf)
{
    sws_app_pass_t           *p = umcf->app_passes.elts;
    sws_http_upstream_srv_t **ups = umcf->upstreams.elts, *us;
    sws_uint_t                i, k;

    for (i = 0; i < umcf->app_passes.nelts; i++) {
        /* (cf's context is no longer the http block's: umcf's list) */
        for (us = NULL, k = 0; us == NULL && k < umcf->upstreams.nelts; k++) {
            if (sws_str_caseeq(&ups[k]->name, &p[i].name)) {
                us = ups[k];
            }
        }
        if (us == NULL || !us->app || strcmp(us->app_protocol, p[i].protocol) == 0) {
            continue;
        }
        sws_log_error(SWS_LOG_EMERG, cf->log, 0, "%.*s \"%.*s\" in %s:%lu: application "
                      "\"%.*s\" (%s:%lu) speaks %s, not %s: use %s", (int) p[i].directive.len,
                      p[i].directive.data, (int) p[i].name.len, p[i].name.data, p[i].file,
                      (unsigned long) p[i].line, (int) us->name.len, us->name.data, us->file,
                      (unsigned long) us->line, us->app_protocol, p[i].protocol, us->app_pass);
        return SWS_ERROR;
    }
    return SWS_OK;
}


/* ---------------------------------------------------------------- done */

/* FNV-1a over each field as its length and its bytes. */
static uint32_t
sws_app_hash(uint32_t h, const void *data, size_t len)
{
    const u_char  *p = data;
    size_t         i;

    for (i = 0; i < sizeof(len); i++) {
        h = (h ^ ((len >> (8 * i)) & 0xff)) * 16777619u;
    }
    for (i = 0; i < len; i++) {
        h = (h ^ p[i]) * 16777619u;
    }
    return h;
}


static uint32_t
sws_app_signature(sws_app_t *app)
{
    uint32_t        h = 2166136261u;
    sws_str_t      *e;
    sws_app_arg_t  *a;
    sws_uint_t      i;
    sws_msec_t      times[2] = { app->start_timeout, app->stop_timeout };

    h = sws_app_hash(h, app->kind, strlen(app->kind));
    h = sws_app_hash(h, app->program.data, app->program.len);
    for (i = 0, a = app->args.elts; i < app->args.nelts; i++) {
        h = sws_app_hash(h, a[i].text.data, a[i].text.len);
        h = sws_app_hash(h, a[i].socket ? "s" : "a", 1);
    }
    h = sws_app_hash(h, app->socket_env.data, app->socket_env.len);
    for (i = 0, e = app->module_env.elts; i < app->module_env.nelts; i++) {
        h = sws_app_hash(h, e[i].data, e[i].len);
    }
    h = sws_app_hash(h, "", 0);
    for (i = 0, e = app->env.elts; i < app->env.nelts; i++) {
        h = sws_app_hash(h, e[i].data, e[i].len);
    }
    h = sws_app_hash(h, "", 0);
    h = sws_app_hash(h, app->root.data, app->root.len);
    h = sws_app_hash(h, app->user.data, app->user.len);
    h = sws_app_hash(h, app->group.data, app->group.len);
    h = sws_app_hash(h, app->run_dir.data, app->run_dir.len);
    h = sws_app_hash(h, &app->processes, sizeof(app->processes));
    h = sws_app_hash(h, &app->min, sizeof(app->min));
    h = sws_app_hash(h, &app->idle_timeout, sizeof(app->idle_timeout));
    h = sws_app_hash(h, &app->max_requests, sizeof(app->max_requests));
    h = sws_app_hash(h, &app->max_memory, sizeof(app->max_memory));
    return sws_app_hash(h, times, sizeof(times));
}


/* The run directory, made if missing (0755), owned by the processes' user
 * when the master runs as root. */
static sws_int_t
sws_app_run_dir(sws_conf_t *cf, sws_app_t *app)
{
    sws_core_conf_t  *ccf = sws_core_conf(sws_conf_cycle(cf));
    struct passwd    *pw;
    char             *dir = (char *) app->run_dir.data, *p;
    const char       *user;
    struct stat       st;

    for (p = dir + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;

            *p = '\0';
            if (mkdir(dir, 0755) == -1 && errno != EEXIST) {
                sws_conf_log_error(SWS_LOG_EMERG, cf, errno, "application \"%.*s\": cannot "
                                   "make run_dir \"%s\"", (int) app->name.len,
                                   app->name.data, dir);
                *p = c;
                return SWS_ERROR;
            }
            *p = c;
            if (c == '\0') {
                break;
            }
        }
    }
    if (stat(dir, &st) == -1 || !S_ISDIR(st.st_mode)) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, errno, "application \"%.*s\": run_dir \"%s\" "
                           "is not a directory", (int) app->name.len, app->name.data, dir);
        return SWS_ERROR;
    }
    if (geteuid() == 0) {
        user = app->user.data ? (char *) sws_pstrdup_cstr(sws_conf_pool(cf), &app->user)
               : ccf->user.data ? (char *) ccf->user.data : "nobody";
        pw = user ? getpwnam(user) : NULL;
        if (pw != NULL && st.st_uid != pw->pw_uid && chown(dir, pw->pw_uid, pw->pw_gid) == -1) {
            sws_conf_log_error(SWS_LOG_WARN, cf, errno, "chown(\"%s\") failed", dir);
        }
    }
    return SWS_OK;
}


/* The changes to the group, each logged: the error log tells which
 * processes the workers may choose, and when that changed. */
enum { SWS_APP_JOINS, SWS_APP_BACK, SWS_APP_DRAINS, SWS_APP_LEAVES };

static sws_int_t
sws_app_list(sws_app_proc_t *ap, const sws_str_t *server, sws_uint_t change)
{
    static const char *const  what[] = { "joins", "goes back up", "drains", "leaves" };
    sws_int_t                 rc;

    rc = change == SWS_APP_DRAINS ? sws_http_upstream_server_drain(&ap->group, server)
         : change == SWS_APP_LEAVES ? sws_http_upstream_server_remove(&ap->group, server)
         : sws_http_upstream_server_add(&ap->group, server, 1);
    if (rc == SWS_OK) {
        sws_log_error(SWS_LOG_INFO, ap->helper->cycle->log, 0, "application \"%.*s\": "
                      "server %.*s %s", (int) ap->group.len, ap->group.data,
                      (int) server->len, server->data, what[change]);
    }
    return rc;
}


/* The entry of server in ap's group, into *st: 1 if it has one. */
static int
sws_app_entry_of(sws_app_proc_t *ap, const sws_str_t *server, sws_http_upstream_stats_t *st)
{
    sws_uint_t  i;

    for (i = 0; ; i++) {
        sws_memzero(st, sizeof(*st));
        st->size = sizeof(*st);
        if (sws_http_upstream_server_info(&ap->group, i, st) != SWS_OK) {
            return 0;
        }
        if (sws_str_eq(&st->server, server)) {
            return 1;
        }
    }
}


/* A server of ap's group that ap's process replaces: another process of
 * its slot (an earlier definition's, or its twin), or a process of a slot
 * that its definition does not have (a reload took processes away). */
static int
sws_app_replaced(sws_app_proc_t *ap, const sws_str_t *server)
{
    const u_char  *p, *end = server->data + server->len;
    sws_uint_t     k = 0;

    if (server->len <= ap->prefix.len + 10 || sws_str_eq(server, &ap->addr)
        || memcmp(server->data, ap->prefix.data, ap->prefix.len) != 0)
    {
        return 0;
    }
    p = server->data + ap->prefix.len + 8;       /* after the hash: ".K." */
    if (end - p > (ptrdiff_t) ap->slot.len && memcmp(p, ap->slot.data, ap->slot.len) == 0) {
        return 1;
    }
    for (p++; p < end && *p >= '0' && *p <= '9'; p++) {
        k = k * 10 + (*p - '0');
    }
    if (p == end || *p != '.') {
        return 0;
    }
    /* a slot beyond MIN started by an earlier definition: nothing of this
     * one replaces it by slot */
    return k >= ap->nslots
           || (k >= ap->nfixed
               && memcmp(server->data + ap->prefix.len, ap->addr.data + ap->prefix.len, 8) != 0);
}


/* The processes ap's process replaces leave the group, one at a time (the
 * indexes move with each): drained (no new requests; those in flight
 * finish, and the group still counts them: sws_app_server_busy), or,
 * remove, taken out (their room is needed). */
static void
sws_app_leave_replaced(sws_app_proc_t *ap, int remove)
{
    sws_http_upstream_stats_t   st;
    sws_str_t                   server;
    u_char                      text[SWS_APP_ADDR_MAX];
    sws_uint_t                  i, n;

    for (n = 0; n < 4 * SWS_APP_PROCESSES_MAX; n++) {
        for (i = 0; ; i++) {
            sws_memzero(&st, sizeof(st));
            st.size = sizeof(st);
            if (sws_http_upstream_server_info(&ap->group, i, &st) != SWS_OK) {
                return;
            }
            if (st.server.len <= sizeof(text) && st.state != NULL
                && strcmp(st.state, "down") != 0
                && (remove || strcmp(st.state, "draining") != 0)
                && sws_app_replaced(ap, &st.server))
            {
                break;
            }
        }
        memcpy(text, st.server.data, st.server.len);
        server.data = text;
        server.len = st.server.len;
        (void) sws_app_list(ap, &server, remove ? SWS_APP_LEAVES : SWS_APP_DRAINS);
    }
}


/* Whether server (of ap's group, drained) still has requests in flight
 * (connections in use, all workers); once it has none, or last (it is
 * stopped now all the same), it leaves the group. */
static int
sws_app_server_busy(sws_app_proc_t *ap, const sws_str_t *server, int last)
{
    sws_http_upstream_stats_t   st;

    if (!sws_app_entry_of(ap, server, &st)) {
        return 0;
    }
    if (st.active > 0 && !last) {
        return 1;
    }
    (void) sws_app_list(ap, server, SWS_APP_LEAVES);
    return st.active > 0;
}


/* The server of helper name of ap's application: its socket,
 * "unix:RUN_DIR/name.sock", in text. 0 if it does not fit. */
static int
sws_app_server_of(sws_app_proc_t *ap, const char *name, u_char *text, sws_str_t *server)
{
    size_t   dir = ap->prefix.len - ap->group.len - 1;     /* "unix:RUN_DIR/" */
    u_char  *p;

    if (dir + strlen(name) + sizeof(".sock") > SWS_APP_ADDR_MAX) {
        return 0;
    }
    p = sws_cpymem(text, ap->prefix.data, dir);
    p = sws_cpymem(p, name, strlen(name));
    p = sws_cpymem(p, ".sock", 5);
    server->data = text;
    server->len = p - text;
    return 1;
}


/* The core's question before it stops the process of helper name, which
 * ap's process replaced (a reload changed the block): has it requests in
 * flight? */
static int
sws_app_busy(sws_helper_t *h, const char *name, int last, void *data)
{
    sws_app_proc_t  *ap = data;
    sws_str_t        server;
    u_char           text[SWS_APP_ADDR_MAX];

    (void) h;
    return sws_app_server_of(ap, name, text, &server) && sws_app_server_busy(ap, &server, last);
}


/* The core's news that the process of helper name, which ap's process
 * replaced, stays: ap's process died while that one drained. It serves
 * again until ap's restart is ready. */
static void
sws_app_kept(sws_helper_t *h, const char *name, void *data)
{
    sws_app_proc_t  *ap = data;
    sws_str_t        server;
    u_char           text[SWS_APP_ADDR_MAX];

    (void) h;
    if (sws_app_server_of(ap, name, text, &server)) {
        (void) sws_app_list(ap, &server, SWS_APP_BACK);
    }
}


static void
sws_app_on_ready(sws_helper_t *h, pid_t pid, void *data)
{
    sws_app_proc_t       *ap = data;
    sws_helper_status_t   hs;
    sws_int_t             rc;

    /* It joins, then those it replaces leave: the slot is never empty.
     * Without room (processes a reload left behind), they leave first. */
    rc = sws_app_list(ap, &ap->addr, SWS_APP_JOINS);
    if (rc == SWS_BUSY) {
        sws_app_leave_replaced(ap, 1);
        rc = sws_app_list(ap, &ap->addr, SWS_APP_JOINS);
    }
    if (rc != SWS_OK) {
        sws_log_error(SWS_LOG_ALERT, h->cycle->log, 0, "application \"%.*s\": process %ld "
                      "could not join its group (%s)", (int) ap->group.len, ap->group.data,
                      (long) pid, rc == SWS_BUSY ? "no room" : "error");
    }
    sws_app_leave_replaced(ap, 0);
    ap->replacing = 0;
    ap->retire = 0;
    if (ap->twin != NULL) {
        /* It replaces its twin (recycled): the twin, drained above, stops
         * at a watch once its requests in flight are done (or after its
         * stop timeout); or it replaces its twin's restart, cancelled now. */
        hs.size = sizeof(hs);
        ap->twin->replacing = 0;
        if (sws_helper_status(ap->twin->helper, &hs) == SWS_OK && hs.ready) {
            ap->twin->retire = 1;
            ap->twin->by_twin = 1;
            ap->twin->retire_until = sws_monotonic_msec() + ap->twin->stop_timeout;
        } else {
            (void) sws_helper_stop_now(ap->twin->helper);
        }
    }
}


/* Resident bytes of pid, 0 if unknown. */
static size_t
sws_app_rss(pid_t pid)
{
    char           path[64];
    unsigned long  size, resident = 0;
    FILE          *f;

    snprintf(path, sizeof(path), "/proc/%ld/statm", (long) pid);
    f = fopen(path, "r");
    if (f == NULL) {
        return 0;
    }
    if (fscanf(f, "%lu %lu", &size, &resident) != 2) {
        resident = 0;
    }
    fclose(f);
    return (size_t) resident * (size_t) sysconf(_SC_PAGESIZE);
}


/* Whether the slot of ap has a process (its own or its twin's). */
static int
sws_app_running(sws_app_proc_t *ap)
{
    sws_helper_status_t  hs;

    hs.size = sizeof(hs);
    if (sws_helper_status(ap->helper, &hs) == SWS_OK && hs.running) {
        return 1;
    }
    hs.size = sizeof(hs);
    return ap->twin != NULL && sws_helper_status(ap->twin->helper, &hs) == SWS_OK
           && hs.running;
}


/* A slot's processes go: drained now, stopped at a watch once their
 * requests in flight are done, or at once when not ready. */
static void
sws_app_stop_slot(sws_app_proc_t *ap)
{
    sws_helper_status_t  hs;
    sws_uint_t           i;

    for (i = 0; i < 2 && ap != NULL; i++, ap = ap->twin) {
        hs.size = sizeof(hs);
        if (sws_helper_status(ap->helper, &hs) == SWS_OK && hs.ready) {
            (void) sws_app_list(ap, &ap->addr, SWS_APP_DRAINS);
            ap->retire = 1;
            ap->by_twin = 0;
            ap->retire_until = sws_monotonic_msec() + ap->stop_timeout;
        } else {
            (void) sws_helper_stop_now(ap->helper);
        }
    }
}


/* processes MIN..MAX, once a second from the watch of any process: more
 * requests in flight (the group's connections in use, all workers) than
 * processes starts one more; two processes' worth to spare for
 * idle_timeout stops the last one. */
static void
sws_app_scale(sws_app_scale_t *sc, sws_log_t *log)
{
    sws_http_upstream_stats_t   st;
    sws_msec_t                  now = sws_monotonic_msec();
    sws_uint_t                  i, running = 0, idle = sc->max, last = sc->max;
    uint64_t                    inflight = 0;

    if (now - sc->last < SWS_APP_WATCH - 100) {
        return;                        /* another process's watch did it */
    }
    sc->last = now;
    for (i = 0; i < sc->max; i++) {
        if (sws_app_running(sc->slots[i])) {
            running++;
            last = i;
        } else if (idle == sc->max) {
            idle = i;
        }
    }
    for (i = 0; ; i++) {
        sws_memzero(&st, sizeof(st));
        st.size = sizeof(st);
        if (sws_http_upstream_server_info(&sc->group, i, &st) != SWS_OK) {
            break;
        }
        inflight += st.active;
    }
    if (inflight > running && idle < sc->max) {
        sc->spare_since = 0;
        if (sws_helper_start_now(sc->slots[idle]->helper) == SWS_OK) {
            sws_log_error(SWS_LOG_NOTICE, log, 0, "application \"%.*s\": %llu requests in "
                          "flight for %lu processes: starting process %lu",
                          (int) sc->group.len, sc->group.data, (unsigned long long) inflight,
                          (unsigned long) running, (unsigned long) idle);
        }
        return;
    }
    if (running <= sc->min || inflight + 2 > running || last < sc->min || last == sc->max) {
        sc->spare_since = 0;
        return;
    }
    if (sc->spare_since == 0) {
        sc->spare_since = now;
        return;
    }
    if (now - sc->spare_since < sc->idle_timeout) {
        return;
    }
    sc->spare_since = now;
    sws_log_error(SWS_LOG_NOTICE, log, 0, "application \"%.*s\": %llu requests in flight for "
                  "%lu processes: stopping process %lu", (int) sc->group.len, sc->group.data,
                  (unsigned long long) inflight, (unsigned long) running, (unsigned long) last);
    sws_app_stop_slot(sc->slots[last]);
}


/* Recycling (every SWS_APP_WATCH ms while the process is ready): past
 * max_requests requests or max_memory resident bytes, its twin starts;
 * once that one is ready it takes the slot's requests and this one is
 * stopped (sws_app_on_ready). */
static void
sws_app_watch(sws_helper_t *h, pid_t pid, void *data)
{
    sws_app_proc_t             *ap = data;
    sws_http_upstream_stats_t   st;
    sws_helper_status_t         hs;
    int                         listed;
    size_t                      rss = 0;
    char                        why[96];

    listed = sws_app_entry_of(ap, &ap->addr, &st);
    hs.size = sizeof(hs);
    if (!ap->retire && listed && st.state != NULL && strcmp(st.state, "draining") == 0
        && ap->twin != NULL && sws_helper_status(ap->twin->helper, &hs) == SWS_OK && hs.ready)
    {
        /* Drained for its twin under the configuration before a reload
         * (which kept both and forgot that): it goes as it would have. */
        ap->retire = 1;
        ap->by_twin = 1;
        ap->retire_until = sws_monotonic_msec() + ap->stop_timeout;
    }
    if (ap->retire) {
        if (sws_app_server_busy(ap, &ap->addr, sws_monotonic_msec() >= ap->retire_until)
            && sws_monotonic_msec() < ap->retire_until)
        {
            return;
        }
        ap->retire = 0;
        (void) sws_helper_stop_now(ap->helper);
        return;
    }
    if (ap->scale != NULL) {
        sws_app_scale(ap->scale, h->cycle->log);
    }
    if (ap->replacing || ap->twin == NULL || (ap->max_requests == 0 && ap->max_memory == 0)) {
        return;
    }
    why[0] = '\0';
    if (ap->max_requests && listed && st.requests >= ap->max_requests) {
        snprintf(why, sizeof(why), "served %llu requests (max_requests %lu)",
                 (unsigned long long) st.requests, (unsigned long) ap->max_requests);
    }
    if (why[0] == '\0' && ap->max_memory) {
        rss = sws_app_rss(pid);
        if (rss >= ap->max_memory) {
            snprintf(why, sizeof(why), "has %zu bytes resident (max_memory %zu)", rss,
                     ap->max_memory);
        }
    }
    if (why[0] == '\0') {
        return;
    }
    if (sws_helper_start_now(ap->twin->helper) == SWS_OK) {
        ap->replacing = 1;
        sws_log_error(SWS_LOG_NOTICE, h->cycle->log, 0, "application \"%.*s\": process %ld "
                      "%s: starting its replacement", (int) ap->group.len, ap->group.data,
                      (long) pid, why);
    }
}


static void
sws_app_on_exit(sws_helper_t *h, const sws_helper_exit_t *ex, void *data)
{
    sws_app_proc_t       *ap = data, *twin = ap->twin;
    sws_helper_status_t   hs;

    (void) h;
    if (twin != NULL && twin->retire && twin->by_twin && ex->was_ready && !ex->stopped) {
        /* It died while its twin, which it replaced, drained: the twin,
         * still there, serves again (not a 503 until its restart is
         * ready, which drains the twin again); the twin's watch leaves
         * the restart to the backoff (a crash loop). */
        hs.size = sizeof(hs);
        if (sws_helper_status(twin->helper, &hs) == SWS_OK && hs.running
            && sws_app_list(twin, &twin->addr, SWS_APP_BACK) == SWS_OK)
        {
            twin->retire = 0;
            twin->by_twin = 0;
            twin->replacing = 1;
        }
    }
    (void) sws_app_list(ap, &ap->addr, SWS_APP_LEAVES);
    if (ap->retire && !ex->stopped) {
        /* It was going: died while it drained, it is not restarted. */
        ap->retire = 0;
        (void) sws_helper_stop_now(ap->helper);
    }
}


/* One process of the application: slot k of the definition hashed sig;
 * twin 1: the slot's second helper (recycling), started when the first
 * must go. */
static sws_app_proc_t *
sws_app_declare(sws_conf_t *cf, sws_app_t *app, uint32_t sig, sws_uint_t k, sws_uint_t twin)
{
    sws_pool_t      *pool = sws_conf_pool(cf);
    sws_helper_t    *h;
    sws_app_proc_t  *ap;
    sws_app_arg_t   *a;
    sws_str_t        name, path, slot, *e, s;
    sws_uint_t       i;
    u_char           buf[64], *p;
    size_t           len;

    p = sws_slprintf(buf, buf + sizeof(buf), twin ? "%.*s-%08x.%u.1" : "%.*s-%08x.%u",
                     (int) app->name.len, app->name.data, (unsigned) sig, (unsigned) k);
    name.data = buf;
    name.len = p - buf;
    h = sws_helper_add(cf, &name);
    ap = sws_pcalloc(pool, sizeof(sws_app_proc_t));
    if (h == NULL || ap == NULL) {
        return NULL;
    }
    ap->helper = h;
    ap->k = k;
    ap->nslots = app->processes;
    ap->nfixed = app->min;
    ap->max_requests = app->max_requests;
    ap->max_memory = app->max_memory;
    ap->stop_timeout = app->stop_timeout;

    len = app->run_dir.len + 1 + name.len + sizeof(".sock");
    ap->addr.data = sws_pnalloc(pool, len + 5);
    ap->prefix.data = sws_pnalloc(pool, 5 + app->run_dir.len + app->name.len + 2);
    ap->slot.data = sws_pnalloc(pool, 32);
    if (ap->addr.data == NULL || ap->prefix.data == NULL || ap->slot.data == NULL) {
        return NULL;
    }
    p = sws_slprintf(ap->addr.data, ap->addr.data + len + 5, "unix:%.*s/%.*s.sock",
                     (int) app->run_dir.len, app->run_dir.data, (int) name.len, name.data);
    ap->addr.len = p - ap->addr.data;
    *p = '\0';
    path.data = ap->addr.data + 5;
    path.len = ap->addr.len - 5;
    p = sws_slprintf(ap->prefix.data, ap->prefix.data + 5 + app->run_dir.len + app->name.len + 2,
                     "unix:%.*s/%.*s-", (int) app->run_dir.len, app->run_dir.data,
                     (int) app->name.len, app->name.data);
    ap->prefix.len = p - ap->prefix.data;
    p = sws_slprintf(ap->slot.data, ap->slot.data + 32, ".%u.", (unsigned) k);
    ap->slot.len = p - ap->slot.data;
    ap->group = app->name;

    p = sws_slprintf(buf, buf + sizeof(buf), "%.*s.%u", (int) app->name.len, app->name.data,
                     (unsigned) k);
    slot.data = buf;
    slot.len = p - buf;

    if (sws_helper_set_program(h, &app->program) != SWS_OK
        || sws_helper_set_slot(h, &slot) != SWS_OK)
    {
        return NULL;
    }
    for (i = 0, a = app->args.elts; i < app->args.nelts; i++) {
        s = a[i].text;
        if (a[i].socket) {
            s.data = sws_pnalloc(pool, a[i].text.len + path.len);
            if (s.data == NULL) {
                return NULL;
            }
            p = sws_cpymem(s.data, a[i].text.data, a[i].text.len);
            p = sws_cpymem(p, path.data, path.len);
            s.len = p - s.data;
        }
        if (sws_helper_add_arg(h, &s) != SWS_OK) {
            return NULL;
        }
    }
    /* The module's variables, then the block's: a later one wins. */
    for (i = 0, e = app->module_env.elts; i < app->module_env.nelts; i += 2) {
        if (sws_helper_set_env(h, &e[i], &e[i + 1]) != SWS_OK) {
            return NULL;
        }
    }
    for (i = 0, e = app->env.elts; i < app->env.nelts; i += 2) {
        if (sws_helper_set_env(h, &e[i], &e[i + 1]) != SWS_OK) {
            return NULL;
        }
    }
    if ((app->socket_env.len && sws_helper_set_env(h, &app->socket_env, &path) != SWS_OK)
        || (app->root.len && sws_helper_set_directory(h, &app->root) != SWS_OK)
        || (app->user.data
            && sws_helper_set_user(h, &app->user, app->group.data ? &app->group : NULL)
               != SWS_OK)
        || sws_helper_set_ready_probe(h, &ap->addr) != SWS_OK
        || sws_helper_set_ready_timeout(h, app->start_timeout) != SWS_OK
        || sws_helper_set_stop(h, SIGTERM, app->stop_timeout) != SWS_OK
        || sws_helper_set_callbacks(h, sws_app_on_ready, sws_app_on_exit, ap) != SWS_OK)
    {
        return NULL;
    }
    h->busy = sws_app_busy;
    h->kept = sws_app_kept;
    if (app->max_requests || app->max_memory || app->min < app->processes) {
        h->watch = sws_app_watch;
        h->watch_every = SWS_APP_WATCH;
        h->dormant = twin || k >= app->min;
    }
    return ap;
}


sws_int_t
sws_app_done(sws_conf_t *cf, sws_app_t *app)
{
    static const sws_str_t  run = sws_string("run");
    sws_http_upstream_srv_t *us;
    sws_app_proc_t         *one, *two;
    u_char                 *pass;
    sws_app_scale_t        *scale = NULL;
    uint32_t                sig;
    sws_uint_t              k;

    if (app->done) {
        return SWS_OK;
    }
    app->done = 1;
    if (app->program.len == 0) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s application \"%.*s\" has nothing to run",
                           app->kind, (int) app->name.len, app->name.data);
        return SWS_ERROR;
    }
    if (app->processes == 0) {
        app->processes = app->min = 1;
    }
    if (app->idle_timeout == SWS_UNSET_MSEC) {
        app->idle_timeout = SWS_APP_IDLE_TIMEOUT;
    }
    if (app->start_timeout == SWS_UNSET_MSEC) {
        app->start_timeout = SWS_APP_START_TIMEOUT;
    }
    if (app->stop_timeout == SWS_UNSET_MSEC) {
        app->stop_timeout = SWS_APP_STOP_TIMEOUT;
    }
    if (app->run_dir.data == NULL) {
        app->run_dir = run;
        if (sws_conf_full_name(cf, &app->run_dir, 0) != SWS_OK) {
            return SWS_ERROR;
        }
    }
    if (app->run_dir.data[app->run_dir.len] != '\0') {
        app->run_dir.data = (u_char *) sws_pstrdup_cstr(sws_conf_pool(cf), &app->run_dir);
        if (app->run_dir.data == NULL) {
            return SWS_ERROR;
        }
    }
    /* "DIR/NAME-1a2b3c4d.63.1.sock" must fit a unix socket's path */
    if (app->run_dir.len + app->name.len + sizeof("/-1a2b3c4d.63.1.sock")
        > sizeof(((struct sockaddr_un *) 0)->sun_path))
    {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "application \"%.*s\": its socket paths "
                           "in \"%s\" are too long for a unix socket: use a shorter run_dir",
                           (int) app->name.len, app->name.data, (char *) app->run_dir.data);
        return SWS_ERROR;
    }
    if (sws_app_run_dir(cf, app) != SWS_OK) {
        return SWS_ERROR;
    }
    /* Room for the old process of each slot beside its new one. */
    us = sws_http_upstream_app_group(cf, &app->name, 2 * app->processes);
    if (us == NULL) {
        return SWS_ERROR;
    }
    us->app_protocol = app->protocol ? app->protocol : "http";
    us->keepalive = app->keepalive;          /* unset: the upstream default */
    if (app->balance) {
        us->method = app->balance;
        us->method_set = 1;
    }
    if (app->pass) {
        us->app_pass = app->pass;
    } else {
        pass = sws_pnalloc(sws_conf_pool(cf), strlen(app->kind) + sizeof("_pass"));
        if (pass == NULL) {
            return SWS_ERROR;
        }
        memcpy(sws_cpymem(pass, app->kind, strlen(app->kind)), "_pass", sizeof("_pass"));
        us->app_pass = (const char *) pass;
    }
    if (app->min < app->processes) {
        scale = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_app_scale_t));
        if (scale == NULL
            || (scale->slots = sws_pcalloc(sws_conf_pool(cf),
                                           app->processes * sizeof(sws_app_proc_t *))) == NULL)
        {
            return SWS_ERROR;
        }
        scale->group = app->name;
        scale->min = app->min;
        scale->max = app->processes;
        scale->idle_timeout = app->idle_timeout;
    }
    sig = sws_app_signature(app);
    for (k = 0; k < app->processes; k++) {
        one = sws_app_declare(cf, app, sig, k, 0);
        if (one == NULL) {
            return SWS_ERROR;
        }
        if (scale != NULL) {
            scale->slots[k] = one;
            one->scale = scale;
        }
        if (app->max_requests || app->max_memory) {
            /* its twin, to take over when it is recycled */
            two = sws_app_declare(cf, app, sig, k, 1);
            if (two == NULL) {
                return SWS_ERROR;
            }
            one->twin = two;
            two->twin = one;
            two->scale = scale;
        }
    }
    return SWS_OK;
}
