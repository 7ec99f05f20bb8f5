/*
 * secure_link VALUE; secure_link_md5 TEXT; secure_link_secret WORD;
 * $secure_link, $secure_link_expires: nginx's secure_link module, links
 * that only work when they carry the MD5 of a text the server knows.
 *
 * secure_link / secure_link_md5: VALUE (with variables) is
 * "HASH[,EXPIRES]": HASH the base64url of the MD5 of TEXT (with
 * variables), EXPIRES a time in seconds since the epoch. $secure_link is
 * "1" when HASH matches and the link has not expired, "0" when it matches
 * but has expired, empty otherwise (wrong, malformed, EXPIRES not a
 * positive number). $secure_link_expires is EXPIRES once $secure_link has
 * been read in the request.
 *
 * secure_link_secret (documented as a location's; http and server take it
 * too, as in nginx): the request target is
 * "/PREFIX/HEX/LINK" where HEX is the 32 hex digits of the MD5 of LINK
 * followed by WORD; $secure_link is then LINK (the rest of the target, the
 * query string included), empty otherwise.
 */
#include <openssl/evp.h>
#include <scalws/scalws.h>

extern sws_module_t sws_module;

typedef struct {
    sws_http_format_t  *value;     /* secure_link; NULL: unset */
    sws_http_format_t  *md5;       /* secure_link_md5 */
    sws_str_t           secret;    /* secure_link_secret; data NULL: unset */
    unsigned            value_set:1;
    unsigned            md5_set:1;
} sws_secure_link_conf_t;

typedef struct {
    sws_str_t  expires;            /* as the link gave it */
} sws_secure_link_ctx_t;

static char *sws_secure_link_set_format(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_secure_link_set_secret(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_secure_link_create_main_conf(sws_conf_t *cf);
static void *sws_secure_link_create_loc_conf(sws_conf_t *cf);
static char *sws_secure_link_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);

static const sws_command_t  sws_secure_link_commands[] = {
    { "secure_link", SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF
                     | SWS_CONF_TAKE1,
      sws_secure_link_set_format, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "secure_link_md5", SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF
                         | SWS_CONF_TAKE1,
      sws_secure_link_set_format, SWS_HTTP_LOC_CONF_OFFSET, 1, NULL },
    /* nginx documents a location's; it takes http and server too */
    { "secure_link_secret", SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF
                            | SWS_CONF_TAKE1,
      sws_secure_link_set_secret, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "secure_link",
    .commands = sws_secure_link_commands,
    .create_main_conf = sws_secure_link_create_main_conf,
    .create_loc_conf = sws_secure_link_create_loc_conf,
    .merge_loc_conf = sws_secure_link_merge_loc_conf,
};


static void
sws_secure_link_md5(const u_char *a, size_t alen, const sws_str_t *b, u_char out[16])
{
    EVP_MD_CTX   *ctx = EVP_MD_CTX_new();
    unsigned int  n = 16;

    if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_md5(), NULL) != 1
        || EVP_DigestUpdate(ctx, a, alen) != 1
        || (b && EVP_DigestUpdate(ctx, b->data, b->len) != 1)
        || EVP_DigestFinal_ex(ctx, out, &n) != 1)
    {
        memset(out, 0, 16);         /* matches nothing a client can send */
        out[0] = 1;
        out[15] = 0xfe;
    }
    EVP_MD_CTX_free(ctx);
}


/*
 * base64url (RFC 4648 5) as nginx decodes it: up to the first '=', no
 * other byte outside the alphabet, not 1 byte over a multiple of 4; the
 * unused low bits of the last character are ignored. The length decoded,
 * or -1.
 */
static ssize_t
sws_secure_link_base64url(u_char *dst, const u_char *src, size_t len)
{
    uint32_t  acc = 0;
    size_t    i, bits = 0;
    u_char   *d = dst;
    int       v;

    for (i = 0; i < len && src[i] != '='; i++) {
        /* counted first: nothing is decoded from a malformed value */
    }
    len = i;
    if (len % 4 == 1) {
        return -1;
    }
    for (i = 0; i < len; i++) {
        u_char c = src[i];

        if (c >= 'A' && c <= 'Z') {
            v = c - 'A';
        } else if (c >= 'a' && c <= 'z') {
            v = c - 'a' + 26;
        } else if (c >= '0' && c <= '9') {
            v = c - '0' + 52;
        } else if (c == '-') {
            v = 62;
        } else if (c == '_') {
            v = 63;
        } else {
            return -1;
        }
        acc = (acc << 6) | (uint32_t) v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            *d++ = (u_char) (acc >> bits);
        }
    }
    return d - dst;
}


/* secure_link_secret: "/PREFIX/HEX/LINK" */
static void
sws_secure_link_by_secret(sws_http_request_t *r, const sws_secure_link_conf_t *conf,
    sws_str_t *value)
{
    const sws_str_t  *t = sws_http_unparsed_uri(r);
    const u_char     *p = t->data + 1, *last = t->data + t->len, *hex, *slash;
    u_char            md5[16];
    sws_int_t         n;
    int               i;

    if (t->len < 1) {
        return;
    }
    slash = memchr(p, '/', (size_t) (last - p));      /* after the prefix */
    if (slash == NULL) {
        return;
    }
    hex = slash + 1;
    slash = memchr(hex, '/', (size_t) (last - hex));  /* after the hash */
    if (slash == NULL || slash - hex != 32 || slash + 1 == last) {
        return;
    }
    p = slash + 1;
    sws_secure_link_md5(p, (size_t) (last - p), &conf->secret, md5);
    for (i = 0; i < 16; i++) {
        n = sws_hextoi(hex + 2 * i, 2);
        if (n == SWS_ERROR || n != md5[i]) {
            return;
        }
    }
    value->data = (u_char *) p;
    value->len = (size_t) (last - p);
}


static void
sws_secure_link_variable(sws_http_request_t *r, void *data, sws_str_t *value)
{
    const sws_secure_link_conf_t  *conf = sws_http_loc_conf(r, &sws_module);
    sws_secure_link_ctx_t         *ctx;
    sws_pool_t                    *pool = sws_http_pool(r);
    sws_str_t                      link, text;
    u_char                        *comma, hash[18], md5[16];
    sws_int_t                      expires = 0;
    ssize_t                        n;

    (void) data;
    value->len = 0;
    value->data = NULL;

    if (conf->secret.data) {
        sws_secure_link_by_secret(r, conf, value);
        return;
    }
    if (conf->value == NULL || conf->md5 == NULL
        || sws_http_format_string(conf->value, r, pool, 0, NULL, 0, &link) != SWS_OK)
    {
        return;
    }

    comma = memchr(link.data, ',', link.len);
    if (comma) {
        text.data = comma + 1;
        text.len = link.len - (size_t) (text.data - link.data);
        link.len = (size_t) (comma - link.data);
        expires = text.len ? sws_atoi(text.data, text.len) : SWS_ERROR;
        if (expires <= 0) {
            return;
        }
        ctx = sws_pcalloc(pool, sizeof(sws_secure_link_ctx_t));
        if (ctx == NULL) {
            return;
        }
        ctx->expires = text;
        sws_http_set_ctx(r, &sws_module, ctx);
    }

    if (link.len > 24) {
        return;
    }
    n = sws_secure_link_base64url(hash, link.data, link.len);
    if (n != 16) {
        return;
    }
    if (sws_http_format_string(conf->md5, r, pool, 0, NULL, 0, &text) != SWS_OK) {
        return;
    }
    sws_secure_link_md5(text.data, text.len, NULL, md5);
    if (memcmp(hash, md5, 16) != 0) {
        return;
    }
    value->data = (u_char *) (expires && expires < (sws_int_t) sws_time_sec() ? "0" : "1");
    value->len = 1;
}


static void
sws_secure_link_expires_variable(sws_http_request_t *r, void *data, sws_str_t *value)
{
    const sws_secure_link_ctx_t  *ctx = sws_http_get_ctx(r, &sws_module);

    (void) data;
    if (ctx) {
        *value = ctx->expires;
    } else {
        value->len = 0;
        value->data = NULL;
    }
}


/* ---- configuration ---- */

static void *
sws_secure_link_create_main_conf(sws_conf_t *cf)
{
    /* The variables exist in every configuration, as nginx's, and keep
     * their first value for the request as nginx's do: $secure_link_expires
     * read before $secure_link stays empty. */
    if (sws_http_variable_add_cached(cf, "secure_link", sws_secure_link_variable, NULL, 0)
        != SWS_OK
        || sws_http_variable_add_cached(cf, "secure_link_expires",
                                        sws_secure_link_expires_variable, NULL, 0) != SWS_OK)
    {
        return NULL;
    }
    return sws_pcalloc(sws_conf_pool(cf), sizeof(sws_uint_t));
}


static void *
sws_secure_link_create_loc_conf(sws_conf_t *cf)
{
    return sws_pcalloc(sws_conf_pool(cf), sizeof(sws_secure_link_conf_t));
}


static char *
sws_secure_link_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    const sws_secure_link_conf_t  *prev = parent;
    sws_secure_link_conf_t        *conf = child;

    if (conf->secret.data) {
        if (conf->value_set || conf->md5_set) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "\"secure_link_secret\" cannot be mixed "
                               "with \"secure_link\" and \"secure_link_md5\"");
            return SWS_CONF_ERROR;
        }
        return SWS_CONF_OK;
    }
    if (!conf->value_set) {
        conf->value = prev->value;
        conf->value_set = prev->value_set;
    }
    if (!conf->md5_set) {
        conf->md5 = prev->md5;
        conf->md5_set = prev->md5_set;
    }
    if (!conf->value_set && !conf->md5_set) {
        conf->secret = prev->secret;
    }
    return SWS_CONF_OK;
}


/* secure_link VALUE; secure_link_md5 TEXT (cmd->offset: 1 for _md5) */
static char *
sws_secure_link_set_format(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_secure_link_conf_t  *slcf = conf;
    sws_http_format_t      **f = cmd->offset ? &slcf->md5 : &slcf->value;
    const char              *err = NULL;

    if (cmd->offset ? slcf->md5_set : slcf->value_set) {
        return "is duplicate";
    }
    *f = sws_http_format_compile(sws_conf_pool(cf), sws_conf_arg(cf, 1),
                                 SWS_HTTP_ESCAPE_NONE, &err);
    if (*f == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s", err ? err : "invalid value");
        return SWS_CONF_ERROR;
    }
    if (cmd->offset) {
        slcf->md5_set = 1;
    } else {
        slcf->value_set = 1;
    }
    return SWS_CONF_OK;
}


static char *
sws_secure_link_set_secret(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_secure_link_conf_t  *slcf = conf;

    (void) cmd;
    if (slcf->secret.data) {
        return "is duplicate";
    }
    slcf->secret = *sws_conf_arg(cf, 1);
    if (slcf->secret.data == NULL) {
        slcf->secret.data = (u_char *) "";
    }
    return SWS_CONF_OK;
}
