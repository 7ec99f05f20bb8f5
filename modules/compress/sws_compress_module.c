/*
 * The compress module's directives: nginx's gzip_* set, and the same for
 * brotli_* and zstd_*, each coding with its own values:
 *
 *   gzip on|off;                       brotli, zstd
 *   gzip_comp_level N;                 gzip 1-9 (1), brotli 0-11 (6), zstd 1-19 (1)
 *   gzip_types TYPE...;                text/html always; "*" for any
 *   gzip_min_length SIZE;              20
 *   gzip_vary on|off;                  off
 *   gzip_proxied off|expired|no-cache|no-store|private|no_last_modified|
 *                no_etag|auth|any...;  off
 *   gzip_buffers NUMBER SIZE;          32 4k
 *   gzip_http_version 1.0|1.1;         1.1
 *   gzip_disable TEXT...;              "msie6", or User-Agent substrings
 *   gzip_static on|off|always;         off: .gz (.br, .zst) siblings
 *   compress_prefer CODING...;         zstd br gzip: the server's order for
 *                                      codings the client rates the same
 *
 * The filters and the static handler are only installed when some level
 * turns a coding on, so that a server without compression keeps the
 * core's fixed-response fast path.
 */
#include "sws_compress.h"

const sws_str_t  sws_compress_suffix[SWS_COMPRESS_NCODINGS] = {
    sws_string(".gz"), sws_string(".br"), sws_string(".zst")
};

static char *sws_compress_set_enable(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_compress_set_static(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_compress_set_proxied(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_compress_set_buffers(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_compress_set_prefer(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_compress_create_loc_conf(sws_conf_t *cf);
static char *sws_compress_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_compress_postconfiguration(sws_conf_t *cf);

#define SWS_COMPRESS_CTX  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)
#define SWS_COMPRESS_OFF(i, field)  offsetof(sws_compress_loc_conf_t, coding[i].field)

static const sws_conf_enum_t  sws_compress_http_versions[] = {
    { sws_string("1.0"), SWS_HTTP_VERSION_10 },
    { sws_string("1.1"), SWS_HTTP_VERSION_11 },
    { sws_null_string, 0 }
};

static const sws_conf_enum_t  sws_compress_static_modes[] = {
    { sws_string("off"), SWS_COMPRESS_STATIC_OFF },
    { sws_string("on"), SWS_COMPRESS_STATIC_ON },
    { sws_string("always"), SWS_COMPRESS_STATIC_ALWAYS },
    { sws_null_string, 0 }
};

static const sws_conf_enum_t  sws_compress_proxied_flags[] = {
    { sws_string("off"), SWS_COMPRESS_PROXIED_OFF },
    { sws_string("expired"), SWS_COMPRESS_PROXIED_EXPIRED },
    { sws_string("no-cache"), SWS_COMPRESS_PROXIED_NO_CACHE },
    { sws_string("no-store"), SWS_COMPRESS_PROXIED_NO_STORE },
    { sws_string("private"), SWS_COMPRESS_PROXIED_PRIVATE },
    { sws_string("no_last_modified"), SWS_COMPRESS_PROXIED_NO_LM },
    { sws_string("no_etag"), SWS_COMPRESS_PROXIED_NO_ETAG },
    { sws_string("auth"), SWS_COMPRESS_PROXIED_AUTH },
    { sws_string("any"), SWS_COMPRESS_PROXIED_ANY },
    { sws_null_string, 0 }
};

/* The directives of one coding: "gzip", "brotli" or "zstd" and its index. */
#define SWS_COMPRESS_CODING_COMMANDS(name, i)                                              \
    { name, SWS_COMPRESS_CTX | SWS_CONF_FLAG, sws_compress_set_enable,                    \
      SWS_HTTP_LOC_CONF_OFFSET, SWS_COMPRESS_OFF(i, enable), NULL },                       \
    { name "_comp_level", SWS_COMPRESS_CTX | SWS_CONF_TAKE1, sws_conf_set_num_slot,        \
      SWS_HTTP_LOC_CONF_OFFSET, SWS_COMPRESS_OFF(i, level), NULL },                        \
    { name "_types", SWS_COMPRESS_CTX | SWS_CONF_1MORE, sws_conf_set_str_array_slot,      \
      SWS_HTTP_LOC_CONF_OFFSET, SWS_COMPRESS_OFF(i, types), NULL },                        \
    { name "_min_length", SWS_COMPRESS_CTX | SWS_CONF_TAKE1, sws_conf_set_size_slot,       \
      SWS_HTTP_LOC_CONF_OFFSET, SWS_COMPRESS_OFF(i, min_length), NULL },                   \
    { name "_vary", SWS_COMPRESS_CTX | SWS_CONF_FLAG, sws_conf_set_flag_slot,              \
      SWS_HTTP_LOC_CONF_OFFSET, SWS_COMPRESS_OFF(i, vary), NULL },                         \
    { name "_proxied", SWS_COMPRESS_CTX | SWS_CONF_1MORE, sws_compress_set_proxied,        \
      SWS_HTTP_LOC_CONF_OFFSET, SWS_COMPRESS_OFF(i, proxied), sws_compress_proxied_flags },\
    { name "_buffers", SWS_COMPRESS_CTX | SWS_CONF_TAKE2, sws_compress_set_buffers,        \
      SWS_HTTP_LOC_CONF_OFFSET, SWS_COMPRESS_OFF(i, bufs_num), NULL },                     \
    { name "_http_version", SWS_COMPRESS_CTX | SWS_CONF_TAKE1, sws_conf_set_enum_slot,     \
      SWS_HTTP_LOC_CONF_OFFSET, SWS_COMPRESS_OFF(i, http_version),                         \
      sws_compress_http_versions },                                                        \
    { name "_disable", SWS_COMPRESS_CTX | SWS_CONF_1MORE, sws_conf_set_str_array_slot,    \
      SWS_HTTP_LOC_CONF_OFFSET, SWS_COMPRESS_OFF(i, disable), NULL },                      \
    { name "_static", SWS_COMPRESS_CTX | SWS_CONF_TAKE1, sws_compress_set_static,          \
      SWS_HTTP_LOC_CONF_OFFSET, SWS_COMPRESS_OFF(i, static_mode), sws_compress_static_modes }

static const sws_command_t  sws_compress_commands[] = {
    SWS_COMPRESS_CODING_COMMANDS("gzip", SWS_COMPRESS_GZIP),
    SWS_COMPRESS_CODING_COMMANDS("brotli", SWS_COMPRESS_BR),
    SWS_COMPRESS_CODING_COMMANDS("zstd", SWS_COMPRESS_ZSTD),
    { "compress_prefer", SWS_COMPRESS_CTX | SWS_CONF_1MORE, sws_compress_set_prefer,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "compress",
    .commands = sws_compress_commands,
    .create_loc_conf = sws_compress_create_loc_conf,
    .merge_loc_conf = sws_compress_merge_loc_conf,
    .postconfiguration = sws_compress_postconfiguration,
};

/* Set while a configuration is read: whether anything turns a coding (or
 * a precompressed lookup) on. Reset by postconfiguration for the next. */
static int  sws_compress_filter_used;
static int  sws_compress_static_used;

/* Defaults per coding: level, lowest and highest level. */
static const sws_int_t  sws_compress_levels[SWS_COMPRESS_NCODINGS][3] = {
    { 1, 1, 9 },        /* gzip: nginx's default */
    { 6, 0, 11 },       /* brotli: ngx_brotli's */
    { 1, 1, 19 },       /* zstd: zstd-nginx-module's; 20-22 need huge windows */
};
static const char *const  sws_compress_names[SWS_COMPRESS_NCODINGS] = {
    "gzip", "brotli", "zstd"
};


static char *
sws_compress_set_enable(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    char  *rv = sws_conf_set_flag_slot(cf, cmd, conf);

    if (rv == SWS_CONF_OK && *(sws_int_t *) ((u_char *) conf + cmd->offset)) {
        sws_compress_filter_used = 1;
    }
    return rv;
}


static char *
sws_compress_set_static(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    char  *rv = sws_conf_set_enum_slot(cf, cmd, conf);

    if (rv == SWS_CONF_OK
        && *(sws_uint_t *) ((u_char *) conf + cmd->offset) != SWS_COMPRESS_STATIC_OFF)
    {
        sws_compress_static_used = 1;
    }
    return rv;
}


static char *
sws_compress_set_proxied(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_uint_t             *field = (sws_uint_t *) ((u_char *) conf + cmd->offset), i;
    sws_str_t              *v;
    const sws_conf_enum_t  *e;

    if (*field != SWS_UNSET_UINT) {
        return "is duplicate";
    }
    *field = 0;
    for (i = 1; i < sws_conf_nargs(cf); i++) {
        v = sws_conf_arg(cf, i);
        for (e = cmd->post; e->name.len != 0; e++) {
            if (sws_str_eq(v, &e->name)) {
                break;
            }
        }
        if (e->name.len == 0) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid value \"%.*s\" in \"%s\" directive",
                               (int) v->len, v->data, cmd->name);
            return SWS_CONF_ERROR;
        }
        *field |= e->value;
    }
    if ((*field & SWS_COMPRESS_PROXIED_OFF) && *field != SWS_COMPRESS_PROXIED_OFF) {
        return "has \"off\" with other values";
    }
    return SWS_CONF_OK;
}


/* gzip_buffers NUMBER SIZE: offset is that of bufs_num, bufs_size follows. */
static char *
sws_compress_set_buffers(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_compress_coding_conf_t *cc;
    sws_str_t                  *num = sws_conf_arg(cf, 1), *size = sws_conf_arg(cf, 2);
    sws_int_t                   n;
    ssize_t                     s;

    cc = (sws_compress_coding_conf_t *) ((u_char *) conf + cmd->offset
                                         - offsetof(sws_compress_coding_conf_t, bufs_num));
    if (cc->bufs_num != SWS_UNSET) {
        return "is duplicate";
    }
    n = sws_atoi(num->data, num->len);
    s = sws_parse_size(size);
    if (n <= 0 || n > 1024 || s < 64 || s > 16 * 1024 * 1024) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                           "invalid value \"%.*s %.*s\" in \"%s\" directive: "
                           "it must be a number of 1 to 1024 and a size of 64 to 16m",
                           (int) num->len, num->data, (int) size->len, size->data, cmd->name);
        return SWS_CONF_ERROR;
    }
    cc->bufs_num = n;
    cc->bufs_size = (size_t) s;
    return SWS_CONF_OK;
}


static sws_int_t
sws_compress_coding_by_name(const sws_str_t *v)
{
    sws_uint_t  i;

    for (i = 0; i < SWS_COMPRESS_NCODINGS; i++) {
        if (sws_str_eq(v, &sws_compress_token[i]) || sws_str_eq_cstr(v, sws_compress_names[i])) {
            return (sws_int_t) i;
        }
    }
    return SWS_ERROR;
}


/* compress_prefer CODING...: the codings not named come after, in the
 * default order. */
static char *
sws_compress_set_prefer(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    static const sws_uint_t   def[] = { SWS_COMPRESS_ZSTD, SWS_COMPRESS_BR, SWS_COMPRESS_GZIP };
    sws_compress_loc_conf_t  *lcf = conf;
    sws_uint_t                i, j, seen = 0;
    sws_int_t                 c;
    sws_str_t                *v;

    (void) cmd;
    if (lcf->nprefer) {
        return "is duplicate";
    }
    for (i = 1; i < sws_conf_nargs(cf); i++) {
        v = sws_conf_arg(cf, i);
        c = sws_compress_coding_by_name(v);
        if (c == SWS_ERROR || (seen & (1u << c))) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                               "%s coding \"%.*s\" in \"compress_prefer\": "
                               "it must be gzip, br (brotli) or zstd, each once",
                               c == SWS_ERROR ? "unknown" : "repeated", (int) v->len, v->data);
            return SWS_CONF_ERROR;
        }
        seen |= 1u << c;
        lcf->prefer[lcf->nprefer++] = (sws_uint_t) c;
    }
    for (j = 0; j < sws_nelems(def); j++) {
        if (!(seen & (1u << def[j]))) {
            lcf->prefer[lcf->nprefer++] = def[j];
        }
    }
    return SWS_CONF_OK;
}


static void *
sws_compress_create_loc_conf(sws_conf_t *cf)
{
    sws_compress_loc_conf_t     *lcf;
    sws_compress_coding_conf_t  *cc;
    sws_uint_t                   i;

    lcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_compress_loc_conf_t));
    if (lcf == NULL) {
        return NULL;
    }
    for (i = 0; i < SWS_COMPRESS_NCODINGS; i++) {
        cc = &lcf->coding[i];
        cc->enable = SWS_UNSET;
        cc->level = SWS_UNSET;
        cc->vary = SWS_UNSET;
        cc->min_length = SWS_UNSET_SIZE;
        cc->proxied = SWS_UNSET_UINT;
        cc->bufs_num = SWS_UNSET;
        cc->http_version = SWS_UNSET_UINT;
        cc->static_mode = SWS_UNSET_UINT;
    }
    return lcf;
}


/* The types, lower-cased, with text/html (nginx always compresses it). */
static sws_array_t *
sws_compress_types(sws_conf_t *cf, sws_array_t *types)
{
    static const sws_str_t  html = sws_string("text/html");
    sws_array_t            *a;
    sws_str_t              *t, *s;
    sws_uint_t              i, n = types ? types->nelts : 0;

    a = sws_array_create(sws_conf_pool(cf), n + 1, sizeof(sws_str_t));
    if (a == NULL || (t = sws_array_push(a)) == NULL) {
        return NULL;
    }
    *t = html;
    s = types ? types->elts : NULL;
    for (i = 0; i < n; i++) {
        t = sws_array_push(a);
        if (t == NULL) {
            return NULL;
        }
        t->len = s[i].len;
        t->data = sws_pnalloc(sws_conf_pool(cf), s[i].len + 1);
        if (t->data == NULL) {
            return NULL;
        }
        sws_strlow(t->data, s[i].data, s[i].len + 1);
    }
    return a;
}


static char *
sws_compress_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    static const sws_uint_t      def[] = { SWS_COMPRESS_ZSTD, SWS_COMPRESS_BR,
                                           SWS_COMPRESS_GZIP };
    sws_compress_loc_conf_t     *prev = parent, *conf = child;
    sws_compress_coding_conf_t  *cc, *pc;
    sws_uint_t                   i;

    for (i = 0; i < SWS_COMPRESS_NCODINGS; i++) {
        cc = &conf->coding[i];
        pc = &prev->coding[i];

        sws_conf_merge_value(cc->enable, pc->enable, 0);
        sws_conf_merge_value(cc->level, pc->level, sws_compress_levels[i][0]);
        sws_conf_merge_value(cc->vary, pc->vary, 0);
        sws_conf_merge_size_value(cc->min_length, pc->min_length, 20);
        sws_conf_merge_uint_value(cc->proxied, pc->proxied, SWS_COMPRESS_PROXIED_OFF);
        sws_conf_merge_uint_value(cc->http_version, pc->http_version, SWS_HTTP_VERSION_11);
        sws_conf_merge_uint_value(cc->static_mode, pc->static_mode, SWS_COMPRESS_STATIC_OFF);
        sws_conf_merge_ptr_value(cc->disable, pc->disable, NULL);
        if (cc->bufs_num == SWS_UNSET) {
            cc->bufs_num = pc->bufs_num != SWS_UNSET ? pc->bufs_num : 32;
            cc->bufs_size = pc->bufs_num != SWS_UNSET ? pc->bufs_size : 4096;
        }

        if (cc->types == NULL) {
            /* the parent's (already made whole), or the default */
            cc->types = pc->types ? pc->types : sws_compress_types(cf, NULL);
        } else {
            cc->types = sws_compress_types(cf, cc->types);
        }
        if (cc->types == NULL) {
            return SWS_CONF_ERROR;
        }

        if (cc->level < sws_compress_levels[i][1] || cc->level > sws_compress_levels[i][2]) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                               "\"%s_comp_level\" must be from %d to %d, not %d",
                               sws_compress_names[i], (int) sws_compress_levels[i][1],
                               (int) sws_compress_levels[i][2], (int) cc->level);
            return SWS_CONF_ERROR;
        }
    }

    if (conf->nprefer == 0) {
        if (prev->nprefer) {
            sws_memcpy(conf->prefer, prev->prefer, sizeof(conf->prefer));
            conf->nprefer = prev->nprefer;
        } else {
            sws_memcpy(conf->prefer, def, sizeof(def));
            conf->nprefer = sws_nelems(def);
        }
    }
    return SWS_CONF_OK;
}


static sws_int_t
sws_compress_postconfiguration(sws_conf_t *cf)
{
    sws_int_t  rc = SWS_OK;

    if (sws_compress_filter_used) {
        rc = sws_compress_filter_init(cf);
    }
    if (rc == SWS_OK && sws_compress_static_used) {
        rc = sws_compress_static_init(cf);
    }
    sws_compress_filter_used = 0;
    sws_compress_static_used = 0;
    return rc;
}
