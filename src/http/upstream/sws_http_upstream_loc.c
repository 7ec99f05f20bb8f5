/*
 * The framework's part of a location's configuration (timeouts, retries,
 * buffers, header rules; TLS in sws_http_upstream_ssl_conf.c) and its directives, shared by every protocol
 * module under names of its own ("proxy_read_timeout", ...).
 */
#include "sws_http_upstream.h"
#include "sws_core_module.h"

static sws_int_t sws_ups_temp_merge(sws_conf_t *cf, sws_http_upstream_conf_t *prev,
    sws_http_upstream_conf_t *conf);
static sws_int_t sws_ups_socket_merge(sws_http_upstream_conf_t *prev,
    sws_http_upstream_conf_t *conf);
static sws_int_t sws_ups_busy_buffers_merge(sws_conf_t *cf, sws_http_upstream_conf_t *prev,
    sws_http_upstream_conf_t *conf);

sws_http_upstream_conf_t *
sws_http_upstream_conf_create(sws_conf_t *cf)
{
    sws_http_upstream_conf_t *uc;

    uc = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_http_upstream_conf_t));
    if (uc == NULL) {
        return NULL;
    }
    uc->connect_timeout = SWS_UNSET_MSEC;
    uc->send_timeout = SWS_UNSET_MSEC;
    uc->read_timeout = SWS_UNSET_MSEC;
    uc->next_upstream_timeout = SWS_UNSET_MSEC;
    uc->next_upstream_tries = SWS_UNSET_UINT;
    uc->buffering = SWS_UNSET;
    uc->request_buffering = SWS_UNSET;
    uc->pass_request_body = SWS_UNSET;
    uc->ignore_client_abort = SWS_UNSET;
    uc->intercept_errors = SWS_UNSET;
    uc->upgrade = SWS_UNSET;
    uc->nbuffers = SWS_UNSET_UINT;
    uc->buffer_size = SWS_UNSET_SIZE;
    uc->head_buffer_size = SWS_UNSET_SIZE;
    uc->max_temp_file_size = -1;
    uc->temp_file_write_size = SWS_UNSET_SIZE;
    uc->socket_keepalive = SWS_UNSET;
    uc->bind = SWS_UNSET;
    uc->busy_buffers_size = SWS_UNSET_SIZE;
    uc->limit_rate = SWS_UNSET_SIZE;
    return uc;
}

/* Response headers not passed unless "pass_header" says so. */
static const sws_str_t sws_ups_hidden[] = {
    sws_string("date"), sws_string("server"), sws_string("x-pad"),
    sws_string("x-accel-expires"), sws_string("x-accel-redirect"),
    sws_string("x-accel-limit-rate"), sws_string("x-accel-buffering"),
    sws_string("x-accel-charset")
};

int
sws_ups_hidden_by_default(const u_char *lcname, size_t len)
{
    sws_uint_t i;

    for (i = 0; i < sws_nelems(sws_ups_hidden); i++) {
        if (sws_ups_hidden[i].len == len && memcmp(sws_ups_hidden[i].data, lcname, len) == 0) {
            return 1;
        }
    }
    return 0;
}

static int
sws_ups_in_list(const sws_array_t *list, const sws_str_t *name)
{
    const sws_str_t *s;
    sws_uint_t       i;

    if (list == NULL) {
        return 0;
    }
    s = list->elts;
    for (i = 0; i < list->nelts; i++) {
        if (sws_str_eq(&s[i], name)) {
            return 1;
        }
    }
    return 0;
}

static sws_int_t
sws_ups_build_hide(sws_conf_t *cf, sws_http_upstream_conf_t *conf)
{
    static int         marker;
    const sws_str_t   *name;
    sws_str_t         *s;
    sws_uint_t         i;
    sws_int_t          rc;

    conf->hide = sws_hash_create(sws_conf_pool(cf), 16, 1);
    if (conf->hide == NULL) {
        return SWS_ERROR;
    }
    conf->hide_lens = 0;
    conf->hide_default = 1;
    for (i = 0; i < sws_nelems(sws_ups_hidden); i++) {
        name = &sws_ups_hidden[i];
        if (sws_ups_in_list(conf->pass_list, name)) {
            conf->hide_default = 0;
        } else {
            if (sws_hash_add(conf->hide, name, &marker) == SWS_ERROR) {
                return SWS_ERROR;
            }
            conf->hide_lens |= SWS_UPS_HIDE_LEN_BIT(name->len);
        }
    }
    if (conf->hide_list) {
        s = conf->hide_list->elts;
        for (i = 0; i < conf->hide_list->nelts; i++) {
            if (!sws_ups_in_list(conf->pass_list, &s[i])) {
                rc = sws_hash_add(conf->hide, &s[i], &marker);
                if (rc == SWS_ERROR) {
                    return SWS_ERROR;
                }
                if (rc != SWS_BUSY) {
                    conf->hide_default = 0;        /* a name of its own */
                }
                conf->hide_lens |= SWS_UPS_HIDE_LEN_BIT(s[i].len);
            }
        }
    }
    return SWS_OK;
}

char *
sws_http_upstream_conf_merge(sws_conf_t *cf, sws_http_upstream_conf_t *prev,
    sws_http_upstream_conf_t *conf)
{
    int here = conf->hide_list != NULL || conf->pass_list != NULL;

    sws_conf_merge_msec_value(conf->connect_timeout, prev->connect_timeout, 60000);
    sws_conf_merge_msec_value(conf->send_timeout, prev->send_timeout, 60000);
    sws_conf_merge_msec_value(conf->read_timeout, prev->read_timeout, 60000);
    sws_conf_merge_msec_value(conf->next_upstream_timeout, prev->next_upstream_timeout, 0);
    sws_conf_merge_uint_value(conf->next_upstream_tries, prev->next_upstream_tries, 0);
    if (conf->next_upstream == 0) {
        conf->next_upstream = prev->next_upstream ? prev->next_upstream
                                                  : SWS_UPS_FT_ERROR | SWS_UPS_FT_TIMEOUT;
    }
    sws_conf_merge_value(conf->buffering, prev->buffering, 1);
    sws_conf_merge_value(conf->request_buffering, prev->request_buffering, 1);
    sws_conf_merge_value(conf->pass_request_body, prev->pass_request_body, 1);
    sws_conf_merge_value(conf->ignore_client_abort, prev->ignore_client_abort, 0);
    sws_conf_merge_value(conf->intercept_errors, prev->intercept_errors, 0);
    if (conf->upgrade == SWS_UNSET) {
        conf->upgrade = prev->upgrade == SWS_UNSET ? 1 : prev->upgrade;
        conf->upgrade_list = prev->upgrade_list;       /* NULL: websocket */
    }
    if (conf->nbuffers == SWS_UNSET_UINT) {
        conf->nbuffers = prev->nbuffers == SWS_UNSET_UINT ? 8 : prev->nbuffers;
        conf->buffer_size = prev->buffer_size == SWS_UNSET_SIZE ? 8192 : prev->buffer_size;
    }
    sws_conf_merge_size_value(conf->head_buffer_size, prev->head_buffer_size, 8192);
    if (conf->head_buffer_size < 1024) {
        return "buffer size must be at least 1k";
    }
    if (sws_ups_temp_merge(cf, prev, conf) != SWS_OK) {
        return SWS_CONF_ERROR;
    }
    if (conf->max_temp_file_size && conf->max_temp_file_size < (off_t) conf->temp_file_write_size) {
        return "max_temp_file_size must be 0 or at least temp_file_write_size";
    }

    if (sws_ups_socket_merge(prev, conf) != SWS_OK
        || sws_ups_busy_buffers_merge(cf, prev, conf) != SWS_OK)
    {
        return SWS_CONF_ERROR;
    }

    if (conf->upstream == NULL && prev->upstream != NULL) {
        /* an if block without a target of its own (only a location has
         * one before): it goes where its location goes */
        conf->upstream = prev->upstream;
        conf->ssl_wanted = prev->ssl_wanted;
    }
    if (conf->hide_list == NULL) {
        conf->hide_list = prev->hide_list;
    }
    if (conf->pass_list == NULL) {
        conf->pass_list = prev->pass_list;
    }
    if (!here && prev->hide) {
        conf->hide = prev->hide;
        conf->hide_lens = prev->hide_lens;
        conf->hide_default = prev->hide_default;
    } else if (sws_ups_build_hide(cf, conf) != SWS_OK) {
        return SWS_CONF_ERROR;
    }
    if (sws_ups_ssl_merge(cf, prev, conf) != SWS_OK) {
        return SWS_CONF_ERROR;
    }
    sws_ups_health_probe_conf(cf, conf);
    return SWS_CONF_OK;
}

/* The temporary files of buffered responses: --http-proxy-temp-path
 * ("proxy_temp" under the prefix) unless a level says otherwise (the master creates it, as nginx
 * does its *_temp directories); 1024m at most; 2 buffers at a time. */
static sws_int_t
sws_ups_temp_merge(sws_conf_t *cf, sws_http_upstream_conf_t *prev,
    sws_http_upstream_conf_t *conf)
{
    sws_http_upstream_main_conf_t *umcf;
    sws_http_temp_path_t          *path, **paths, **slot;
    sws_uint_t                     i;

    if (conf->temp_path == NULL) {
        conf->temp_path = prev->temp_path;
    }
    if (conf->temp_path == NULL) {
        path = sws_pcalloc(sws_conf_pool(cf), sizeof(*path));
        if (path == NULL) {
            return SWS_ERROR;
        }
        /* --http-proxy-temp-path (proxy_temp under the prefix) */
        if (sws_core_default_path(cf, SWS_CORE_PATH_PROXY_TEMP, &path->name) != SWS_OK) {
            return SWS_ERROR;
        }
        conf->temp_path = prev->temp_path = path;
    }
    umcf = sws_ups_configuring_main();
    if (umcf) {
        paths = umcf->temp_paths.elts;
        for (i = 0; i < umcf->temp_paths.nelts && paths[i] != conf->temp_path; i++) {
            /* noted already? */
        }
        if (i == umcf->temp_paths.nelts) {
            slot = sws_array_push(&umcf->temp_paths);
            if (slot == NULL) {
                return SWS_ERROR;
            }
            *slot = conf->temp_path;
        }
    }
    if (conf->max_temp_file_size == -1) {
        conf->max_temp_file_size = prev->max_temp_file_size == -1 ? (off_t) 1024 * 1024 * 1024
                                                                 : prev->max_temp_file_size;
    }
    sws_conf_merge_size_value(conf->temp_file_write_size, prev->temp_file_write_size,
                              2 * sws_max(conf->buffer_size, conf->head_buffer_size));
    return SWS_OK;
}

/* proxy_bind (inherited whole, "off" included), proxy_socket_keepalive,
 * proxy_limit_rate */
static sws_int_t
sws_ups_socket_merge(sws_http_upstream_conf_t *prev, sws_http_upstream_conf_t *conf)
{
    sws_conf_merge_value(conf->socket_keepalive, prev->socket_keepalive, 0);
    if (conf->bind == SWS_UNSET) {
        conf->bind = prev->bind == SWS_UNSET ? 0 : prev->bind;
        conf->bind_fmt = prev->bind_fmt;
        conf->bind_sa = prev->bind_sa;
        conf->bind_socklen = prev->bind_socklen;
    }
    sws_conf_merge_size_value(conf->limit_rate, prev->limit_rate, 0);
    return SWS_OK;
}

/*
 * proxy_busy_buffers_size: nginx's checks, when it is set (nginx makes
 * the default, twice the larger of the two buffer sizes, fail the second
 * check with few buffers; here a configuration without the directive
 * loads as it did). Our buffering needs no such limit: see docs/proxy.md.
 */
static sws_int_t
sws_ups_busy_buffers_merge(sws_conf_t *cf, sws_http_upstream_conf_t *prev,
    sws_http_upstream_conf_t *conf)
{
    size_t       size = sws_max(conf->head_buffer_size, conf->buffer_size);
    const char  *name;
    size_t       plen;

    if (conf->busy_buffers_size == SWS_UNSET_SIZE) {
        conf->busy_buffers_size = prev->busy_buffers_size;
        conf->busy_name = prev->busy_name;
    }
    if (conf->busy_buffers_size == SWS_UNSET_SIZE) {
        return SWS_OK;
    }
    name = conf->busy_name;
    plen = strlen(name) - (sizeof("busy_buffers_size") - 1);    /* "proxy_" */
    if (conf->busy_buffers_size < size) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "\"%s\" must be equal to or greater than "
                           "the maximum of the value of \"%.*sbuffer_size\" and one of the "
                           "\"%.*sbuffers\"", name, (int) plen, name, (int) plen, name);
        return SWS_ERROR;
    }
    if (conf->busy_buffers_size > (conf->nbuffers - 1) * conf->buffer_size) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "\"%s\" must be less than the size of all "
                           "\"%.*sbuffers\" minus one buffer", name, (int) plen, name);
        return SWS_ERROR;
    }
    return SWS_OK;
}

static char *
sws_ups_set_busy_buffers(sws_conf_t *cf, const sws_command_t *cmd,
    sws_http_upstream_conf_t *uc)
{
    sws_str_t  *arg = sws_conf_arg(cf, 1);
    ssize_t     size;

    if (uc->busy_buffers_size != SWS_UNSET_SIZE) {
        return "is duplicate";
    }
    size = sws_parse_size(arg);
    if (size == SWS_ERROR) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid value \"%.*s\"",
                           (int) arg->len, arg->data);
        return SWS_CONF_ERROR;
    }
    uc->busy_buffers_size = (size_t) size;
    uc->busy_name = cmd->name;
    return SWS_CONF_OK;
}

static char *
sws_ups_set_temp_path(sws_conf_t *cf, sws_http_upstream_conf_t *uc)
{
    if (uc->temp_path != NULL) {
        return "is duplicate";
    }
    uc->temp_path = sws_palloc(sws_conf_pool(cf), sizeof(sws_http_temp_path_t));
    if (uc->temp_path == NULL) {
        return SWS_CONF_ERROR;
    }
    return sws_http_temp_path_parse(cf, uc->temp_path);
}

static char *
sws_ups_set_temp_size(sws_conf_t *cf, sws_http_upstream_conf_t *uc, int max)
{
    sws_str_t *arg = sws_conf_arg(cf, 1);
    ssize_t    size = sws_parse_size(arg);

    if (max ? uc->max_temp_file_size != -1 : uc->temp_file_write_size != SWS_UNSET_SIZE) {
        return "is duplicate";
    }
    if (size == SWS_ERROR || (!max && size < 1024) || (!max && size > 16 * 1024 * 1024)) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid value \"%.*s\"%s",
                           (int) arg->len, arg->data,
                           max ? "" : " (a size from 1k to 16m)");
        return SWS_CONF_ERROR;
    }
    if (max) {
        uc->max_temp_file_size = (off_t) size;
    } else {
        uc->temp_file_write_size = (size_t) size;
    }
    return SWS_CONF_OK;
}

char *
sws_http_upstream_conf_set_target(sws_conf_t *cf, sws_http_upstream_conf_t *conf,
    const sws_str_t *addr, sws_uint_t default_port)
{
    if (conf->upstream) {
        return "is duplicate";
    }
    if (addr->len == 0) {
        return "has no address";
    }
    conf->upstream = sws_ups_lookup(cf, addr, default_port, 1);
    return conf->upstream ? SWS_CONF_OK : SWS_CONF_ERROR;
}

void
sws_http_upstream_conf_set_recv_fds(sws_http_upstream_conf_t *conf)
{
    conf->recv_fds = 1;
}

int
sws_http_upstream_take_fd(sws_http_upstream_t *u)
{
    return u->c ? sws_connection_take_fd(u->c) : -1;
}

int
sws_http_upstream_conf_has_target(sws_http_upstream_conf_t *conf)
{
    return conf->upstream != NULL;
}

const sws_str_t *
sws_http_upstream_name(sws_http_upstream_conf_t *conf)
{
    static const sws_str_t none = sws_null_string;
    return conf->upstream ? &conf->upstream->name : &none;
}

int
sws_http_upstream_is_unix(sws_http_upstream_conf_t *conf)
{
    return conf->upstream && conf->upstream->unix_sock;
}

/* ---- the directives ---- */

static const sws_conf_enum_t sws_ups_ft_names[] = {
    { sws_string("error"), SWS_UPS_FT_ERROR },
    { sws_string("timeout"), SWS_UPS_FT_TIMEOUT },
    { sws_string("invalid_header"), SWS_UPS_FT_INVALID_HEADER },
    { sws_string("http_500"), SWS_UPS_FT_HTTP_500 },
    { sws_string("http_502"), SWS_UPS_FT_HTTP_502 },
    { sws_string("http_503"), SWS_UPS_FT_HTTP_503 },
    { sws_string("http_504"), SWS_UPS_FT_HTTP_504 },
    { sws_string("http_403"), SWS_UPS_FT_HTTP_403 },
    { sws_string("http_404"), SWS_UPS_FT_HTTP_404 },
    { sws_string("http_429"), SWS_UPS_FT_HTTP_429 },
    { sws_string("non_idempotent"), SWS_UPS_FT_NON_IDEMPOTENT },
    { sws_string("off"), SWS_UPS_FT_OFF },
    { sws_null_string, 0 }
};

static char *
sws_ups_set_next_upstream(sws_conf_t *cf, sws_http_upstream_conf_t *uc)
{
    sws_uint_t              i, n = sws_conf_nargs(cf), mask = 0;
    sws_str_t              *arg;
    const sws_conf_enum_t  *e;

    if (uc->next_upstream) {
        return "is duplicate";
    }
    for (i = 1; i < n; i++) {
        arg = sws_conf_arg(cf, i);
        for (e = sws_ups_ft_names; e->name.len; e++) {
            if (sws_str_eq(arg, &e->name)) {
                break;
            }
        }
        if (e->name.len == 0) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid value \"%.*s\"",
                               (int) arg->len, arg->data);
            return SWS_CONF_ERROR;
        }
        mask |= e->value;
    }
    if ((mask & SWS_UPS_FT_OFF) && mask != SWS_UPS_FT_OFF) {
        return "takes \"off\" alone";
    }
    uc->next_upstream = mask;
    return SWS_CONF_OK;
}

static char *
sws_ups_set_header_list(sws_conf_t *cf, sws_array_t **list)
{
    sws_str_t *arg = sws_conf_arg(cf, 1), *s;

    if (*list == NULL) {
        *list = sws_array_create(sws_conf_pool(cf), 4, sizeof(sws_str_t));
        if (*list == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    s = sws_array_push(*list);
    if (s == NULL) {
        return SWS_CONF_ERROR;
    }
    s->len = arg->len;
    s->data = sws_pnalloc(sws_conf_pool(cf), arg->len);
    if (s->data == NULL) {
        return SWS_CONF_ERROR;
    }
    sws_strlow(s->data, arg->data, arg->len);
    return SWS_CONF_OK;
}

static int
sws_ups_tchar(u_char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
           || (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/*
 * proxy_upgrade off | on | PROTOCOL ...: the Upgrade protocols a request
 * may be tunnelled for (on: websocket). h2c never: a tunnel that speaks
 * HTTP/2 to the server would carry requests that this server's locations
 * (access rules, routing) never see ("h2c smuggling").
 */
static char *
sws_ups_set_upgrade(sws_conf_t *cf, sws_http_upstream_conf_t *uc)
{
    sws_uint_t  i, n = sws_conf_nargs(cf);
    sws_str_t  *arg, *s;
    u_char     *p;

    if (uc->upgrade != SWS_UNSET) {
        return "is duplicate";
    }
    arg = sws_conf_arg(cf, 1);
    if (n == 2 && (sws_str_eq_cstr(arg, "off") || sws_str_eq_cstr(arg, "on"))) {
        uc->upgrade = sws_str_eq_cstr(arg, "on");
        return SWS_CONF_OK;
    }
    uc->upgrade_list = sws_array_create(sws_conf_pool(cf), n - 1, sizeof(sws_str_t));
    if (uc->upgrade_list == NULL) {
        return SWS_CONF_ERROR;
    }
    for (i = 1; i < n; i++) {
        arg = sws_conf_arg(cf, i);
        for (p = arg->data; p < arg->data + arg->len && sws_ups_tchar(*p); p++) {
            /* a token: RFC 9110 7.8 protocol-name */
        }
        if (arg->len == 0 || p != arg->data + arg->len
            || sws_str_eq_cstr(arg, "on") || sws_str_eq_cstr(arg, "off"))
        {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid protocol \"%.*s\" "
                               "(off, on, or protocol names)", (int) arg->len, arg->data);
            return SWS_CONF_ERROR;
        }
        if (arg->len == 3 && sws_strncasecmp(arg->data, (u_char *) "h2c", 3) == 0) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "cannot tunnel \"h2c\": HTTP/2 "
                               "to the server would bypass this server's locations");
            return SWS_CONF_ERROR;
        }
        s = sws_array_push(uc->upgrade_list);
        if (s == NULL) {
            return SWS_CONF_ERROR;
        }
        s->len = arg->len;
        s->data = sws_pnalloc(sws_conf_pool(cf), arg->len);
        if (s->data == NULL) {
            return SWS_CONF_ERROR;
        }
        sws_strlow(s->data, arg->data, arg->len);
    }
    uc->upgrade = 1;
    return SWS_CONF_OK;
}

static char *
sws_ups_set_buffers(sws_conf_t *cf, sws_http_upstream_conf_t *uc)
{
    sws_str_t *n = sws_conf_arg(cf, 1);
    sws_int_t  num;
    ssize_t    size;

    if (uc->nbuffers != SWS_UNSET_UINT) {
        return "is duplicate";
    }
    num = sws_atoi(n->data, n->len);
    size = sws_parse_size(sws_conf_arg(cf, 2));
    if (num < 1 || num > 1024 || size < 1024) {
        return "has an invalid value (1..1024 buffers of at least 1k)";
    }
    uc->nbuffers = (sws_uint_t) num;
    uc->buffer_size = (size_t) size;
    return SWS_CONF_OK;
}

char *
sws_http_upstream_conf_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_upstream_conf_t *uc = *(sws_http_upstream_conf_t **) conf;
    sws_command_t             typed = *cmd;

    if (uc == NULL) {
        return "is used by a module without an upstream configuration";
    }

#define SWS_UPS_TYPED(field, setter) \
    typed.offset = offsetof(sws_http_upstream_conf_t, field); \
    return setter(cf, &typed, uc)

    switch (cmd->offset) {
    case SWS_UPSTREAM_CONF_CONNECT_TIMEOUT:
        SWS_UPS_TYPED(connect_timeout, sws_conf_set_msec_slot);
    case SWS_UPSTREAM_CONF_SEND_TIMEOUT:
        SWS_UPS_TYPED(send_timeout, sws_conf_set_msec_slot);
    case SWS_UPSTREAM_CONF_READ_TIMEOUT:
        SWS_UPS_TYPED(read_timeout, sws_conf_set_msec_slot);
    case SWS_UPSTREAM_CONF_NEXT_UPSTREAM_TIMEOUT:
        SWS_UPS_TYPED(next_upstream_timeout, sws_conf_set_msec_slot);
    case SWS_UPSTREAM_CONF_NEXT_UPSTREAM_TRIES:
        SWS_UPS_TYPED(next_upstream_tries, sws_conf_set_num_slot);
    case SWS_UPSTREAM_CONF_BUFFERING:
        SWS_UPS_TYPED(buffering, sws_conf_set_flag_slot);
    case SWS_UPSTREAM_CONF_REQUEST_BUFFERING:
        SWS_UPS_TYPED(request_buffering, sws_conf_set_flag_slot);
    case SWS_UPSTREAM_CONF_PASS_REQUEST_BODY:
        SWS_UPS_TYPED(pass_request_body, sws_conf_set_flag_slot);
    case SWS_UPSTREAM_CONF_IGNORE_CLIENT_ABORT:
        SWS_UPS_TYPED(ignore_client_abort, sws_conf_set_flag_slot);
    case SWS_UPSTREAM_CONF_INTERCEPT_ERRORS:
        SWS_UPS_TYPED(intercept_errors, sws_conf_set_flag_slot);
    case SWS_UPSTREAM_CONF_UPGRADE:
        return sws_ups_set_upgrade(cf, uc);
    case SWS_UPSTREAM_CONF_BUFFER_SIZE:
        SWS_UPS_TYPED(head_buffer_size, sws_conf_set_size_slot);
    case SWS_UPSTREAM_CONF_NEXT_UPSTREAM:
        return sws_ups_set_next_upstream(cf, uc);
    case SWS_UPSTREAM_CONF_BUFFERS:
        return sws_ups_set_buffers(cf, uc);
    case SWS_UPSTREAM_CONF_HIDE_HEADER:
        return sws_ups_set_header_list(cf, &uc->hide_list);
    case SWS_UPSTREAM_CONF_PASS_HEADER:
        return sws_ups_set_header_list(cf, &uc->pass_list);
    case SWS_UPSTREAM_CONF_TEMP_PATH:
        return sws_ups_set_temp_path(cf, uc);
    case SWS_UPSTREAM_CONF_MAX_TEMP_FILE_SIZE:
        return sws_ups_set_temp_size(cf, uc, 1);
    case SWS_UPSTREAM_CONF_TEMP_FILE_WRITE_SIZE:
        return sws_ups_set_temp_size(cf, uc, 0);
    case SWS_UPSTREAM_CONF_BIND:
        return sws_ups_set_bind(cf, uc);
    case SWS_UPSTREAM_CONF_SOCKET_KEEPALIVE:
        SWS_UPS_TYPED(socket_keepalive, sws_conf_set_flag_slot);
    case SWS_UPSTREAM_CONF_BUSY_BUFFERS_SIZE:
        return sws_ups_set_busy_buffers(cf, cmd, uc);
    case SWS_UPSTREAM_CONF_LIMIT_RATE:
        SWS_UPS_TYPED(limit_rate, sws_conf_set_size_slot);
    }
    if (cmd->offset >= SWS_UPSTREAM_CONF_SSL_SERVER_NAME
        && cmd->offset <= SWS_UPSTREAM_CONF_SSL_PASSWORD_FILE)
    {
        return sws_ups_ssl_directive(cf, cmd, uc);
    }
#undef SWS_UPS_TYPED
    return "is not an upstream directive (bad offset in the module's table)";
}
