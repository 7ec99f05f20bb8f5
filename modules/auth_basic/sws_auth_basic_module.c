/*
 * The auth_basic module: nginx's auth_basic and auth_basic_user_file.
 *
 *   auth_basic REALM | off;        http, server, location (REALM may hold variables)
 *   auth_basic_user_file FILE;     (variables allowed; relative to the
 *                                   configuration file's directory)
 *
 * In the access phase: a request without valid credentials for a user of
 * the file gets 401 with WWW-Authenticate: Basic realm="REALM". With
 * "satisfy any" (core), allow/deny and this check are alternatives.
 * A missing file answers 403, an unreadable one 500, as nginx does.
 */
#include <errno.h>
#include "sws_auth_basic.h"

typedef struct {
    sws_http_format_t  *realm;     /* NULL: off (or unset, see realm_set) */
    sws_http_format_t  *file;      /* NULL: unset */
    sws_str_t           conf_dir;  /* for relative paths with variables: "DIR/" */
    unsigned            realm_set:1;
} sws_auth_basic_loc_conf_t;

static char *sws_auth_basic_realm(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_auth_basic_user_file(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_auth_basic_create_loc_conf(sws_conf_t *cf);
static char *sws_auth_basic_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_auth_basic_init(sws_conf_t *cf);
static void sws_auth_basic_exit_worker(sws_cycle_t *cycle);

#define SWS_AUTH_BASIC_CTX  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF \
                             | SWS_HTTP_LIF_CONF)

static const sws_command_t sws_auth_basic_commands[] = {
    { "auth_basic", SWS_AUTH_BASIC_CTX | SWS_CONF_TAKE1, sws_auth_basic_realm,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "auth_basic_user_file", SWS_AUTH_BASIC_CTX | SWS_CONF_TAKE1, sws_auth_basic_user_file,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "auth_basic",
    .commands = sws_auth_basic_commands,
    .create_loc_conf = sws_auth_basic_create_loc_conf,
    .merge_loc_conf = sws_auth_basic_merge_loc_conf,
    .postconfiguration = sws_auth_basic_init,
    .exit_worker = sws_auth_basic_exit_worker,
};


/* ---- the check ------------------------------------------------------ */

/* f for r, with room for a NUL after it (not written). */
static sws_int_t
sws_auth_basic_render(sws_http_request_t *r, sws_http_format_t *f, sws_str_t *out)
{
    return sws_http_format_string(f, r, sws_http_pool(r), 1, NULL, 0, out);
}

/* The password file for r, NUL-terminated: a relative path made of
 * variables is taken from the configuration's directory. */
static sws_int_t
sws_auth_basic_path(sws_http_request_t *r, sws_auth_basic_loc_conf_t *lcf, sws_str_t *path)
{
    sws_str_t  name;
    u_char    *p;

    if (sws_auth_basic_render(r, lcf->file, &name) != SWS_OK) {
        return SWS_ERROR;
    }
    if (lcf->conf_dir.len == 0 || (name.len && name.data[0] == '/')) {
        name.data[name.len] = '\0';
        *path = name;
        return SWS_OK;
    }
    p = sws_pnalloc(sws_http_pool(r), lcf->conf_dir.len + name.len + 1);
    if (p == NULL) {
        return SWS_ERROR;
    }
    path->data = p;
    p = sws_cpymem(p, lcf->conf_dir.data, lcf->conf_dir.len);
    p = sws_cpymem(p, name.data, name.len);
    *p = '\0';
    path->len = (size_t) (p - path->data);
    return SWS_OK;
}

/* 401 with the challenge: Basic realm="REALM", the realm a quoted-string
 * (RFC 7617: '"' and '\' escaped). */
static sws_int_t
sws_auth_basic_challenge(sws_http_request_t *r, sws_auth_basic_loc_conf_t *lcf)
{
    static const sws_str_t  name = sws_string("WWW-Authenticate");
    sws_str_t               realm, value;
    size_t                  i, n = 0;
    u_char                 *p;

    if (sws_auth_basic_render(r, lcf->realm, &realm) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    for (i = 0; i < realm.len; i++) {
        n += realm.data[i] == '"' || realm.data[i] == '\\';
    }
    p = sws_pnalloc(sws_http_pool(r), sizeof("Basic realm=\"\"") + realm.len + n);
    if (p == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    value.data = p;
    p = sws_cpymem(p, "Basic realm=\"", 13);
    for (i = 0; i < realm.len; i++) {
        if (realm.data[i] == '"' || realm.data[i] == '\\') {
            *p++ = '\\';
        }
        /* a control byte (from a variable) must not reach the head */
        *p++ = realm.data[i] < 0x20 || realm.data[i] == 0x7f ? ' ' : realm.data[i];
    }
    *p++ = '"';
    value.len = (size_t) (p - value.data);
    if (sws_http_header_out_add(r, &name, &value) == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    return SWS_HTTP_UNAUTHORIZED;
}

/* user and password against the location's file: SWS_OK, the 401, or
 * the 403 / 500 of a file that is not there / cannot be read. */
static sws_int_t
sws_auth_basic_check(sws_http_request_t *r, sws_auth_basic_loc_conf_t *lcf,
    const sws_str_t *user, const sws_str_t *password)
{
    sws_auth_basic_file_t  *file;
    const sws_str_t        *hash;
    sws_str_t               path;
    int                     ok, err;

    if (sws_auth_basic_path(r, lcf, &path) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (memchr(path.data, '\0', path.len) != NULL) {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "auth_basic_user_file: a NUL byte "
                      "in the path made of variables");
        return SWS_HTTP_FORBIDDEN;
    }
    if (sws_auth_basic_file_get(&path, sws_http_log(r), &file) != SWS_OK) {
        err = errno;
        sws_log_error(err == ENOENT ? SWS_LOG_ERR : SWS_LOG_CRIT, sws_http_log(r), err,
                      "open() \"%s\" failed", (char *) path.data);
        return err == ENOENT ? SWS_HTTP_FORBIDDEN : SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    hash = sws_auth_basic_file_find(file, user);
    if (hash == NULL) {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "user \"%.*s\" was not found in \"%s\"",
                      (int) user->len, user->data, (char *) path.data);
        return sws_auth_basic_challenge(r, lcf);
    }
    ok = sws_auth_basic_verify(password, hash, sws_http_log(r));
    if (ok == 1) {
        return SWS_OK;
    }
    if (ok == 0) {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "user \"%.*s\": password mismatch",
                      (int) user->len, user->data);
    }
    return sws_auth_basic_challenge(r, lcf);
}

static sws_int_t
sws_auth_basic_handler(sws_http_request_t *r)
{
    sws_auth_basic_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);
    const sws_str_t            *auth;
    sws_str_t                   user, password;
    u_char                     *buf;
    sws_int_t                   rc;

    if (lcf == NULL || lcf->realm == NULL || lcf->file == NULL) {
        return SWS_DECLINED;
    }

    auth = sws_http_header_in(r, "authorization", 13);
    if (auth == NULL) {
        sws_log_error(SWS_LOG_INFO, sws_http_log(r), 0,
                      "no user/password was provided for basic authentication");
        return sws_auth_basic_challenge(r, lcf);
    }
    buf = sws_pnalloc(sws_http_pool(r), SWS_AUTH_BASIC_MAX_CREDENTIALS);
    if (buf == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (sws_http_parse_basic_credentials(auth->data, auth->len, buf, &user, &password)
        != SWS_OK)
    {
        sws_log_error(SWS_LOG_INFO, sws_http_log(r), 0,
                      "malformed or non-Basic Authorization header");
        sws_memzero(buf, SWS_AUTH_BASIC_MAX_CREDENTIALS);
        return sws_auth_basic_challenge(r, lcf);
    }

    rc = sws_auth_basic_check(r, lcf, &user, &password);
    /* the password leaves no copy in the request's memory */
    sws_memzero(buf, SWS_AUTH_BASIC_MAX_CREDENTIALS);
    return rc;
}


/* ---- configuration -------------------------------------------------- */

static sws_http_format_t *
sws_auth_basic_compile(sws_conf_t *cf, const char *directive, const sws_str_t *text)
{
    sws_http_format_t  *f;
    const char         *err = NULL;

    f = sws_http_format_compile(sws_conf_pool(cf), text, SWS_HTTP_ESCAPE_NONE, &err);
    if (f == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s in \"%s\" directive",
                           err ? err : "cannot compile the value", directive);
    }
    return f;
}

/* auth_basic REALM | off; */
static char *
sws_auth_basic_realm(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_auth_basic_loc_conf_t  *lcf = conf;
    sws_str_t                  *arg = sws_conf_arg(cf, 1);

    (void) cmd;
    if (lcf->realm_set) {
        return "is duplicate";
    }
    lcf->realm_set = 1;
    if (sws_str_eq_cstr(arg, "off")) {
        lcf->realm = NULL;
        return SWS_CONF_OK;
    }
    lcf->realm = sws_auth_basic_compile(cf, "auth_basic", arg);
    return lcf->realm ? SWS_CONF_OK : SWS_CONF_ERROR;
}

/* auth_basic_user_file FILE; */
static char *
sws_auth_basic_user_file(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_auth_basic_loc_conf_t  *lcf = conf;
    sws_str_t                   path = *sws_conf_arg(cf, 1), dot = sws_string(".");

    (void) cmd;
    if (lcf->file != NULL) {
        return "is duplicate";
    }
    if (path.len == 0) {
        return "has an empty file name";
    }
    if (memchr(path.data, '$', path.len) == NULL) {
        /* fixed: made absolute now, against the configuration's directory */
        if (sws_conf_full_name(cf, &path, 1) != SWS_OK) {
            return SWS_CONF_ERROR;
        }
    } else if (path.data[0] != '/') {
        /* with variables: the directory goes in front at request time */
        if (sws_conf_full_name(cf, &dot, 1) != SWS_OK) {
            return SWS_CONF_ERROR;
        }
        lcf->conf_dir.data = dot.data;
        lcf->conf_dir.len = dot.len - 1;        /* "DIR/." -> "DIR/" */
    }
    lcf->file = sws_auth_basic_compile(cf, "auth_basic_user_file", &path);
    return lcf->file ? SWS_CONF_OK : SWS_CONF_ERROR;
}

static void *
sws_auth_basic_create_loc_conf(sws_conf_t *cf)
{
    return sws_pcalloc(sws_conf_pool(cf), sizeof(sws_auth_basic_loc_conf_t));
}

static char *
sws_auth_basic_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_auth_basic_loc_conf_t  *prev = parent, *conf = child;

    (void) cf;
    if (!conf->realm_set) {
        conf->realm = prev->realm;
        conf->realm_set = prev->realm_set;
    }
    if (conf->file == NULL) {
        conf->file = prev->file;
        conf->conf_dir = prev->conf_dir;
    }
    return SWS_CONF_OK;
}

/* Only where auth_basic is on with a user file. */
static sws_uint_t
sws_auth_basic_active(const void *conf)
{
    const sws_auth_basic_loc_conf_t *lcf = conf;

    return lcf->realm != NULL && lcf->file != NULL;
}

static sws_int_t
sws_auth_basic_init(sws_conf_t *cf)
{
    sws_http_phase_handler_t h = {
        .phase = SWS_HTTP_ACCESS_PHASE, .order = SWS_HTTP_ORDER_AUTH_BASIC,
        .handler = sws_auth_basic_handler, .module = &sws_module,
        .active = sws_auth_basic_active
    };

    return sws_http_register_phase_handler(cf, &h);
}

static void
sws_auth_basic_exit_worker(sws_cycle_t *cycle)
{
    (void) cycle;
    sws_auth_basic_files_free();
}
