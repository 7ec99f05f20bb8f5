/*
 * The access module: nginx's allow and deny.
 *
 *   allow ADDRESS | CIDR | unix: | all;     http, server, location
 *   deny  ADDRESS | CIDR | unix: | all;
 *
 * The rules of a level are checked in order and the first that matches the
 * client decides: deny answers 403, allow lets the request through (to the
 * other checks of the access phase, as "satisfy" says). No match: the
 * module has no say. A level with rules of its own replaces all the rules
 * of the level around it; one without inherits them.
 *
 * The client is the request's (sws_http_remote_addr: the peer, or what
 * realip made of it). An IPv4-mapped IPv6 client (::ffff:a.b.c.d, on a
 * dual-stack socket) is matched against the IPv4 rules, as nginx does.
 */
#include <arpa/inet.h>
#include <sys/socket.h>
#include <scalws/scalws.h>

typedef struct {
    int       family;          /* AF_INET, AF_INET6, AF_UNIX; 0: all */
    uint8_t   addr[16];        /* network order, masked */
    uint8_t   mask[16];
    unsigned  deny:1;
} sws_access_rule_t;

typedef struct {
    sws_array_t  *rules;       /* sws_access_rule_t; NULL: none at this level */
} sws_access_loc_conf_t;

static char *sws_access_rule(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_access_create_loc_conf(sws_conf_t *cf);
static char *sws_access_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_access_init(sws_conf_t *cf);

#define SWS_ACCESS_CTX  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF \
                         | SWS_HTTP_LIF_CONF)

static const sws_command_t sws_access_commands[] = {
    { "allow", SWS_ACCESS_CTX | SWS_CONF_TAKE1, sws_access_rule, SWS_HTTP_LOC_CONF_OFFSET,
      0, NULL },
    { "deny", SWS_ACCESS_CTX | SWS_CONF_TAKE1, sws_access_rule, SWS_HTTP_LOC_CONF_OFFSET,
      1, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "access",
    .commands = sws_access_commands,
    .create_loc_conf = sws_access_create_loc_conf,
    .merge_loc_conf = sws_access_merge_loc_conf,
    .postconfiguration = sws_access_init,
};


/* ---- the check ------------------------------------------------------ */

static int
sws_access_match(const sws_access_rule_t *rule, int family, const uint8_t *addr)
{
    size_t  i, n;

    if (rule->family == 0) {
        return 1;
    }
    if (rule->family != family) {
        return 0;
    }
    n = family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
    for (i = 0; i < n; i++) {
        if ((addr[i] & rule->mask[i]) != rule->addr[i]) {
            return 0;
        }
    }
    return 1;
}

static sws_int_t
sws_access_handler(sws_http_request_t *r)
{
    static const uint8_t      mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    sws_access_loc_conf_t    *lcf = sws_http_loc_conf(r, &sws_module);
    const sws_str_t          *text;
    const sws_access_rule_t  *rule;
    char                      buf[INET6_ADDRSTRLEN + 1];
    uint8_t                   addr[16];
    int                       family;
    sws_uint_t                i;

    if (lcf == NULL || lcf->rules == NULL) {
        return SWS_DECLINED;
    }
    text = sws_http_remote_addr(r);
    family = -1;                       /* unknown: only "all" matches */
    if (text->len >= 5 && memcmp(text->data, "unix:", 5) == 0) {
        family = AF_UNIX;
    } else if (text->len && text->len < sizeof(buf)) {
        memcpy(buf, text->data, text->len);
        buf[text->len] = '\0';
        if (inet_pton(AF_INET, buf, addr) == 1) {
            family = AF_INET;
        } else if (inet_pton(AF_INET6, buf, addr) == 1) {
            family = AF_INET6;
            if (memcmp(addr, mapped, sizeof(mapped)) == 0) {
                memmove(addr, addr + 12, 4);
                family = AF_INET;
            }
        }
    }

    rule = lcf->rules->elts;
    for (i = 0; i < lcf->rules->nelts; i++) {
        if (!sws_access_match(&rule[i], family, addr)) {
            continue;
        }
        if (rule[i].deny) {
            sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0,
                          "access forbidden by rule, client: %.*s, uri: \"%.*s\"",
                          (int) text->len, text->data,
                          (int) sws_http_uri(r)->len, sws_http_uri(r)->data);
            return SWS_HTTP_FORBIDDEN;
        }
        return SWS_OK;
    }
    return SWS_DECLINED;
}


/* ---- configuration -------------------------------------------------- */

/* "a.b.c.d", "a.b.c.d/N", an IPv6 address with or without "/N". */
static sws_int_t
sws_access_parse(sws_conf_t *cf, const sws_str_t *arg, sws_access_rule_t *rule)
{
    char       buf[INET6_ADDRSTRLEN + 8];
    char      *slash;
    long       bits, max, i;
    uint8_t    orig[16];
    int        changed = 0;

    if (arg->len >= sizeof(buf)) {
        return SWS_ERROR;
    }
    memcpy(buf, arg->data, arg->len);
    buf[arg->len] = '\0';
    slash = strchr(buf, '/');
    if (slash) {
        *slash++ = '\0';
    }
    if (inet_pton(AF_INET, buf, rule->addr) == 1) {
        rule->family = AF_INET;
        max = 32;
    } else if (inet_pton(AF_INET6, buf, rule->addr) == 1) {
        rule->family = AF_INET6;
        max = 128;
    } else {
        return SWS_ERROR;
    }
    bits = max;
    if (slash) {
        if (*slash == '\0' || strlen(slash) > 3) {
            return SWS_ERROR;
        }
        bits = 0;
        for (; *slash; slash++) {
            if (*slash < '0' || *slash > '9') {
                return SWS_ERROR;
            }
            bits = bits * 10 + (*slash - '0');
        }
        if (bits > max) {
            return SWS_ERROR;
        }
    }
    memcpy(orig, rule->addr, sizeof(orig));
    for (i = 0; i < max / 8; i++) {
        rule->mask[i] = bits >= (i + 1) * 8 ? 0xff
                        : bits <= i * 8 ? 0 : (uint8_t) (0xff << (8 - (bits - i * 8)));
        rule->addr[i] &= rule->mask[i];
        changed |= rule->addr[i] != orig[i];
    }
    if (changed) {
        /* as nginx: accepted, but said */
        sws_conf_log_error(SWS_LOG_WARN, cf, 0, "low address bits of %.*s are meaningless",
                           (int) arg->len, arg->data);
    }
    return SWS_OK;
}

/* allow / deny ADDRESS|CIDR|unix:|all; (cmd->offset: 1 for deny) */
static char *
sws_access_rule(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_access_loc_conf_t  *lcf = conf;
    sws_str_t              *arg = sws_conf_arg(cf, 1);
    sws_access_rule_t      *rule;

    if (lcf->rules == NULL) {
        lcf->rules = sws_array_create(sws_conf_pool(cf), 4, sizeof(sws_access_rule_t));
        if (lcf->rules == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    rule = sws_array_push(lcf->rules);
    if (rule == NULL) {
        return SWS_CONF_ERROR;
    }
    sws_memzero(rule, sizeof(sws_access_rule_t));
    rule->deny = cmd->offset == 1;

    if (sws_str_eq_cstr(arg, "all")) {
        rule->family = 0;
    } else if (sws_str_eq_cstr(arg, "unix:")) {
        rule->family = AF_UNIX;
    } else if (sws_access_parse(cf, arg, rule) != SWS_OK) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid parameter \"%.*s\" in \"%s\" "
                           "directive", (int) arg->len, arg->data, cmd->name);
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}

static void *
sws_access_create_loc_conf(sws_conf_t *cf)
{
    return sws_pcalloc(sws_conf_pool(cf), sizeof(sws_access_loc_conf_t));
}

static char *
sws_access_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_access_loc_conf_t  *prev = parent, *conf = child;

    (void) cf;
    if (conf->rules == NULL) {
        conf->rules = prev->rules;
    }
    return SWS_CONF_OK;
}

static sws_int_t
sws_access_init(sws_conf_t *cf)
{
    return sws_http_add_phase_handler(cf, SWS_HTTP_ACCESS_PHASE, sws_access_handler);
}
