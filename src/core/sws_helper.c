/*
 * Helper processes: what a module declares (sws_helper_add and the
 * setters) and the check made once the configuration is read. The child's
 * side is in sws_helper_child.c, the master's supervision in
 * sws_helper_master.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "sws_helper_internal.h"
#include "sws_conf_internal.h"
#include "sws_core_module.h"
#include "../event/sws_event.h"

#define SWS_HELPER_BACKOFF_FIRST  100
#define SWS_HELPER_BACKOFF_MAX    10000
#define SWS_HELPER_BACKOFF_RESET  10000
#define SWS_HELPER_STOP_TIMEOUT   5000
#define SWS_HELPER_READY_TIMEOUT  30000

/* The cycle's helpers live in an array hung off the cycle. */
sws_array_t *
sws_helpers_of(sws_cycle_t *cycle)
{
    return cycle->helpers;
}


static void
sws_helper_error(sws_helper_t *h, int err, const char *fmt, const char *what)
{
    sws_log_error(SWS_LOG_EMERG, h->cycle->log, err, "helper \"%s\": %s%s in %s:%lu",
                  (char *) h->name.data, fmt, what ? what : "", h->file,
                  (unsigned long) h->line);
}


sws_helper_t *
sws_helper_add(sws_conf_t *cf, const sws_str_t *name)
{
    sws_cycle_t   *cycle = cf->cycle;
    sws_helper_t  *h, **hp;
    sws_uint_t     i;

    for (i = 0; i < name->len; i++) {
        u_char c = name->data[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
              || c == '_' || c == '.' || c == '-'))
        {
            break;
        }
    }
    if (name->len == 0 || name->len > SWS_HELPER_NAME_MAX || i < name->len) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid helper name \"%.*s\": 1 to %d "
                           "letters, digits, \"_\", \".\" or \"-\"",
                           (int) name->len, name->data, SWS_HELPER_NAME_MAX);
        return NULL;
    }

    if (cycle->helpers == NULL) {
        cycle->helpers = sws_array_create(cf->pool, 4, sizeof(sws_helper_t *));
        if (cycle->helpers == NULL) {
            return NULL;
        }
    }
    hp = cycle->helpers->elts;
    for (i = 0; i < cycle->helpers->nelts; i++) {
        if (sws_str_eq(&hp[i]->name, name)) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "helper \"%.*s\" is already declared "
                               "in %s:%lu", (int) name->len, name->data, hp[i]->file,
                               (unsigned long) hp[i]->line);
            return NULL;
        }
    }

    h = sws_pcalloc(cf->pool, sizeof(sws_helper_t));
    hp = sws_array_push(cycle->helpers);
    if (h == NULL || hp == NULL
        || sws_array_init(&h->args, cf->pool, 4, sizeof(sws_str_t)) != SWS_OK
        || sws_array_init(&h->env, cf->pool, 4, sizeof(sws_str_t)) != SWS_OK)
    {
        return NULL;
    }
    h->name.data = sws_pstrdup(cf->pool, name);
    if (h->name.data == NULL) {
        return NULL;
    }
    h->name.len = name->len;
    h->cycle = cycle;
    h->pool = cf->pool;
    h->file = sws_conf_file(cf);
    h->line = sws_conf_line(cf);
    h->uid = (uid_t) -1;
    h->gid = (gid_t) -1;
    h->restart = SWS_HELPER_RESTART_ALWAYS;
    h->backoff_first = SWS_HELPER_BACKOFF_FIRST;
    h->backoff_max = SWS_HELPER_BACKOFF_MAX;
    h->backoff_reset = SWS_HELPER_BACKOFF_RESET;
    h->stop_signal = SIGTERM;
    h->stop_timeout = SWS_HELPER_STOP_TIMEOUT;
    h->ready_timeout = SWS_HELPER_READY_TIMEOUT;
    *hp = h;
    return h;
}


/* A NUL-terminated copy in the cycle's pool. */
static sws_int_t
sws_helper_copy(sws_helper_t *h, sws_str_t *dst, const sws_str_t *src)
{
    dst->data = sws_pstrdup(h->pool, src);
    if (dst->data == NULL) {
        return SWS_ERROR;
    }
    dst->len = src->len;
    return SWS_OK;
}


sws_int_t
sws_helper_set_function(sws_helper_t *h, sws_helper_run_pt run, void *data)
{
    if (run == NULL) {
        return SWS_ERROR;
    }
    h->run = run;
    h->data = data;
    return SWS_OK;
}


sws_int_t
sws_helper_set_program(sws_helper_t *h, const sws_str_t *path)
{
    if (path->len == 0 || memchr(path->data, '\0', path->len) != NULL) {
        sws_helper_error(h, 0, "empty or invalid program path", NULL);
        return SWS_ERROR;
    }
    return sws_helper_copy(h, &h->program, path);
}


sws_int_t
sws_helper_add_arg(sws_helper_t *h, const sws_str_t *arg)
{
    sws_str_t  *a = sws_array_push(&h->args);

    return a == NULL ? SWS_ERROR : sws_helper_copy(h, a, arg);
}


sws_int_t
sws_helper_set_env(sws_helper_t *h, const sws_str_t *name, const sws_str_t *value)
{
    sws_str_t  *e;
    u_char     *p;

    if (name->len == 0 || memchr(name->data, '=', name->len) != NULL) {
        sws_helper_error(h, 0, "invalid environment variable name", NULL);
        return SWS_ERROR;
    }
    e = sws_array_push(&h->env);
    p = sws_pnalloc(h->pool, name->len + value->len + 2);
    if (e == NULL || p == NULL) {
        return SWS_ERROR;
    }
    e->data = p;
    p = sws_cpymem(p, name->data, name->len);
    *p++ = '=';
    p = sws_cpymem(p, value->data, value->len);
    *p = '\0';
    e->len = p - e->data;
    return SWS_OK;
}


sws_int_t
sws_helper_set_directory(sws_helper_t *h, const sws_str_t *dir)
{
    return sws_helper_copy(h, &h->directory, dir);
}


sws_int_t
sws_helper_set_user(sws_helper_t *h, const sws_str_t *user, const sws_str_t *group)
{
    if (sws_helper_copy(h, &h->user, user) != SWS_OK) {
        return SWS_ERROR;
    }
    return group == NULL ? SWS_OK : sws_helper_copy(h, &h->group, group);
}


sws_int_t
sws_helper_set_key(sws_helper_t *h, const sws_str_t *key)
{
    return sws_helper_copy(h, &h->key, key);
}


sws_int_t
sws_helper_set_restart(sws_helper_t *h, sws_uint_t policy)
{
    if (policy > SWS_HELPER_RESTART_NEVER) {
        sws_helper_error(h, 0, "unknown restart policy", NULL);
        return SWS_ERROR;
    }
    h->restart = policy;
    return SWS_OK;
}


sws_int_t
sws_helper_set_backoff(sws_helper_t *h, sws_msec_t first, sws_msec_t max, sws_msec_t reset)
{
    if (first <= 0 || max < first || reset < 0) {
        sws_helper_error(h, 0, "the backoff needs 0 < first <= max and reset >= 0", NULL);
        return SWS_ERROR;
    }
    h->backoff_first = first;
    h->backoff_max = max;
    h->backoff_reset = reset;
    return SWS_OK;
}


sws_int_t
sws_helper_set_stop(sws_helper_t *h, int signo, sws_msec_t timeout)
{
    if (signo <= 0 || signo >= NSIG || signo == SIGSTOP || signo == SIGCHLD || timeout < 0) {
        sws_helper_error(h, 0, "invalid stop signal or timeout", NULL);
        return SWS_ERROR;
    }
    h->stop_signal = signo;
    h->stop_timeout = timeout;
    return SWS_OK;
}


/* An address to listen on or connect to, as sws_parse_listen_addr() takes
 * it; text keeps the normalized form. */
static sws_int_t
sws_helper_set_addr(sws_helper_t *h, const sws_str_t *addr, sws_str_t *text,
    struct sockaddr_storage *sa, socklen_t *salen, const char *what)
{
    sws_str_t  norm;

    if (addr->len == 0 || memchr(addr->data, '\0', addr->len) != NULL
        || sws_parse_listen_addr(h->pool, addr, sa, salen, &norm) != SWS_OK)
    {
        sws_helper_error(h, 0, what, NULL);
        return SWS_ERROR;
    }
    return sws_helper_copy(h, text, &norm);
}


sws_int_t
sws_helper_set_socket(sws_helper_t *h, const sws_str_t *addr, const sws_str_t *fdname)
{
    sws_uint_t  i;

    if (fdname != NULL && fdname->len > 0) {
        /* systemd's names: at most 255 of these, no ":" (the separator) */
        for (i = 0; i < fdname->len; i++) {
            if (fdname->data[i] <= ' ' || fdname->data[i] >= 0x7f || fdname->data[i] == ':') {
                break;
            }
        }
        if (i < fdname->len || fdname->len > 255) {
            sws_helper_error(h, 0, "invalid socket name (LISTEN_FDNAMES)", NULL);
            return SWS_ERROR;
        }
        if (sws_helper_copy(h, &h->fdname, fdname) != SWS_OK) {
            return SWS_ERROR;
        }
    }
    return sws_helper_set_addr(h, addr, &h->socket, &h->socket_sa, &h->socket_salen,
                               "invalid socket address");
}


sws_int_t
sws_helper_set_ready_probe(sws_helper_t *h, const sws_str_t *addr)
{
    return sws_helper_set_addr(h, addr, &h->probe, &h->probe_sa, &h->probe_salen,
                               "invalid ready probe address");
}


sws_int_t
sws_helper_set_ready_timeout(sws_helper_t *h, sws_msec_t timeout)
{
    if (timeout < 0) {
        sws_helper_error(h, 0, "invalid ready timeout", NULL);
        return SWS_ERROR;
    }
    h->ready_timeout = timeout;
    return SWS_OK;
}


sws_int_t
sws_helper_set_callbacks(sws_helper_t *h, sws_helper_ready_pt ready,
    sws_helper_exit_pt on_exit, void *data)
{
    h->on_ready = ready;
    h->on_exit = on_exit;
    h->cb_data = data;
    return SWS_OK;
}


sws_int_t
sws_helper_set_slot(sws_helper_t *h, const sws_str_t *slot)
{
    if (slot->len == 0 || slot->len >= SWS_HELPER_SLOT_MAX
        || memchr(slot->data, '\0', slot->len) != NULL)
    {
        sws_helper_error(h, 0, "invalid slot", NULL);
        return SWS_ERROR;
    }
    return sws_helper_copy(h, &h->slot, slot);
}


/* ---------------------------------------------------------------- check */

/* prefix + path unless path is absolute; NUL-terminated, in the pool. */
static char *
sws_helper_full_path(sws_helper_t *h, const sws_str_t *path)
{
    sws_str_t  *prefix = &h->cycle->prefix;
    u_char     *p, *full;

    if (path->data[0] == '/') {
        return (char *) path->data;
    }
    full = sws_pnalloc(h->pool, prefix->len + path->len + 1);
    if (full == NULL) {
        return NULL;
    }
    p = sws_cpymem(full, prefix->data, prefix->len);
    p = sws_cpymem(p, path->data, path->len);
    *p = '\0';
    return (char *) full;
}


static int
sws_helper_executable(const char *path)
{
    struct stat  st;

    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}


static sws_int_t
sws_helper_find_program(sws_helper_t *h)
{
    const char  *env = getenv("PATH"), *dir, *end;
    char         buf[PATH_MAX];
    sws_str_t    found;
    int          n;

    if (memchr(h->program.data, '/', h->program.len) != NULL) {
        h->path = sws_helper_full_path(h, &h->program);
        if (h->path == NULL) {
            return SWS_ERROR;
        }
        if (!sws_helper_executable(h->path)) {
            sws_helper_error(h, errno, "cannot execute program ", h->path);
            return SWS_ERROR;
        }
        return SWS_OK;
    }

    /* As execvp() would, but now, so that a typo is a configuration error. */
    if (env == NULL || *env == '\0') {
        env = "/usr/local/bin:/usr/bin:/bin";
    }
    for (dir = env; ; dir = end + 1) {
        end = strchrnul(dir, ':');
        n = snprintf(buf, sizeof(buf), "%.*s/%s", (int) (end - dir), end == dir ? "." : dir,
                     (char *) h->program.data);
        if (n > 0 && (size_t) n < sizeof(buf) && sws_helper_executable(buf)) {
            if (sws_str_from_cstr(h->pool, &found, buf) != SWS_OK) {
                return SWS_ERROR;
            }
            h->path = (char *) found.data;
            return SWS_OK;
        }
        if (*end == '\0') {
            break;
        }
    }
    sws_log_error(SWS_LOG_EMERG, h->cycle->log, 0,
                  "helper \"%s\": program \"%s\" not found in PATH \"%s\" in %s:%lu",
                  (char *) h->name.data, (char *) h->program.data, env, h->file,
                  (unsigned long) h->line);
    return SWS_ERROR;
}


/* Who the child runs as: only a master running as root switches. */
static sws_int_t
sws_helper_check_user(sws_helper_t *h)
{
    sws_core_conf_t  *ccf = sws_core_conf(h->cycle);
    struct passwd    *pw;
    struct group     *gr;

    if (geteuid() != 0) {
        if (h->user.data != NULL) {
            sws_log_error(SWS_LOG_WARN, h->cycle->log, 0, "helper \"%s\": a user has effect "
                          "only when the master runs as root in %s:%lu",
                          (char *) h->name.data, h->file, (unsigned long) h->line);
        }
        return SWS_OK;
    }
    if (h->user.data == NULL) {
        h->user = ccf->user;
        h->uid = ccf->uid;
        h->gid = ccf->gid;
        return SWS_OK;
    }
    pw = getpwnam((char *) h->user.data);
    if (pw == NULL) {
        sws_helper_error(h, 0, "unknown user ", (char *) h->user.data);
        return SWS_ERROR;
    }
    h->uid = pw->pw_uid;
    h->gid = pw->pw_gid;
    if (h->group.data != NULL) {
        gr = getgrnam((char *) h->group.data);
        if (gr == NULL) {
            sws_helper_error(h, 0, "unknown group ", (char *) h->group.data);
            return SWS_ERROR;
        }
        h->gid = gr->gr_gid;
    }
    return SWS_OK;
}


/* Each field as its length then its bytes, so no two definitions that
 * differ give the same signature. */
static sws_int_t
sws_helper_sign(sws_array_t *sig, const void *data, size_t len)
{
    u_char  *p = sws_array_push_n(sig, sizeof(size_t) + len);

    if (p == NULL) {
        return SWS_ERROR;
    }
    memcpy(p, &len, sizeof(size_t));
    if (len > 0) {
        memcpy(p + sizeof(size_t), data, len);     /* data may be NULL when len is 0 */
    }
    return SWS_OK;
}


static sws_int_t
sws_helper_signature(sws_helper_t *h)
{
    sws_array_t  sig;
    sws_str_t   *s;
    sws_uint_t   i;
    sws_int_t    rc = SWS_OK;
    sws_msec_t   times[6] = { h->backoff_first, h->backoff_max, h->backoff_reset,
                              h->stop_timeout, (sws_msec_t) h->restart, h->ready_timeout };
    int          ids[3] = { (int) h->uid, (int) h->gid, h->stop_signal };

    if (sws_array_init(&sig, h->pool, 256, 1) != SWS_OK) {
        return SWS_ERROR;
    }
    rc |= sws_helper_sign(&sig, &h->run, sizeof(h->run));
    rc |= sws_helper_sign(&sig, h->key.data, h->key.len);
    rc |= sws_helper_sign(&sig, h->path ? h->path : "", h->path ? strlen(h->path) : 0);
    for (i = 0, s = h->args.elts; i < h->args.nelts; i++) {
        rc |= sws_helper_sign(&sig, s[i].data, s[i].len);
    }
    rc |= sws_helper_sign(&sig, "", 0);
    for (i = 0, s = h->env.elts; i < h->env.nelts; i++) {
        rc |= sws_helper_sign(&sig, s[i].data, s[i].len);
    }
    rc |= sws_helper_sign(&sig, "", 0);
    rc |= sws_helper_sign(&sig, h->directory.data, h->directory.len);
    rc |= sws_helper_sign(&sig, h->socket.data, h->socket.len);
    rc |= sws_helper_sign(&sig, h->fdname.data, h->fdname.len);
    rc |= sws_helper_sign(&sig, h->probe.data, h->probe.len);
    rc |= sws_helper_sign(&sig, times, sizeof(times));
    rc |= sws_helper_sign(&sig, ids, sizeof(ids));
    if (rc != SWS_OK) {
        return SWS_ERROR;
    }
    h->signature.data = sig.elts;
    h->signature.len = sig.nelts;
    return SWS_OK;
}


static sws_int_t
sws_helper_check(sws_helper_t *h)
{
    struct stat  st;
    sws_str_t   *a;
    sws_uint_t   i;
    char        *dir;

    if ((h->run == NULL) == (h->program.data == NULL)) {
        sws_helper_error(h, 0, h->run ? "has both a function and a program"
                               : "has nothing to run (no function, no program)", NULL);
        return SWS_ERROR;
    }

    if (h->socket.data != NULL && h->run != NULL) {
        sws_helper_error(h, 0, "a socket is handed to a program only", NULL);
        return SWS_ERROR;
    }
    if (h->socket.data != NULL && h->probe.data != NULL) {
        sws_helper_error(h, 0, "has both a socket and a ready probe (the socket is "
                         "the probe)", NULL);
        return SWS_ERROR;
    }
    if (h->socket.data != NULL && h->fdname.data == NULL) {
        h->fdname = h->name;
    }

    if (h->program.data != NULL) {
        if (sws_helper_find_program(h) != SWS_OK) {
            return SWS_ERROR;
        }
        h->argv = sws_palloc(h->pool, (h->args.nelts + 2) * sizeof(char *));
        if (h->argv == NULL) {
            return SWS_ERROR;
        }
        h->argv[0] = (char *) h->program.data;
        for (i = 0, a = h->args.elts; i < h->args.nelts; i++) {
            h->argv[i + 1] = (char *) a[i].data;
        }
        h->argv[i + 1] = NULL;
    }

    if (h->directory.data == NULL) {
        h->directory = h->cycle->prefix;
    } else {
        dir = sws_helper_full_path(h, &h->directory);
        if (dir == NULL) {
            return SWS_ERROR;
        }
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
            sws_helper_error(h, errno, "no such directory ", dir);
            return SWS_ERROR;
        }
        h->directory.data = (u_char *) dir;
        h->directory.len = strlen(dir);
    }

    if (sws_helper_check_user(h) != SWS_OK) {
        return SWS_ERROR;
    }
    return sws_helper_signature(h);
}


sws_int_t
sws_helpers_check(sws_cycle_t *cycle)
{
    sws_helper_t **hp;
    sws_uint_t     i;

    if (cycle->helpers == NULL) {
        return SWS_OK;
    }
    hp = cycle->helpers->elts;
    for (i = 0; i < cycle->helpers->nelts; i++) {
        if (sws_helper_check(hp[i]) != SWS_OK) {
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}
