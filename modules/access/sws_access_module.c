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
#include <scalws/scalws.h>

typedef struct {
    sws_cidr_t  net;           /* family 0: all; AF_UNIX: unix: */
    unsigned    deny:1;
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

static sws_int_t
sws_access_handler(sws_http_request_t *r)
{
    sws_access_loc_conf_t    *lcf = sws_http_loc_conf(r, &sws_module);
    const sws_access_rule_t  *rule;
    const sws_str_t          *text;
    socklen_t                 len;
    uint8_t                   addr[16];
    int                       family;
    sws_uint_t                i;

    if (lcf == NULL || lcf->rules == NULL) {
        return SWS_DECLINED;
    }
    /* unknown (-1): only "all" matches */
    family = sws_cidr_addr(sws_http_remote_sockaddr(r, &len), addr);

    rule = lcf->rules->elts;
    for (i = 0; i < lcf->rules->nelts; i++) {
        if (!sws_cidr_match(&rule[i].net, family, addr)) {
            continue;
        }
        if (rule[i].deny) {
            text = sws_http_remote_addr(r);
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
    rule->deny = cmd->offset == 1;
    switch (sws_cidr_parse(arg->data, arg->len, SWS_CIDR_ALL | SWS_CIDR_UNIX, &rule->net)) {
    case SWS_OK:
        break;
    case SWS_DONE:
        /* as nginx: accepted, but said */
        sws_conf_log_error(SWS_LOG_WARN, cf, 0, "low address bits of %.*s are meaningless",
                           (int) arg->len, arg->data);
        break;
    default:
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

/* Only where allow or deny is written (here or above). */
static sws_uint_t
sws_access_active(const void *conf)
{
    const sws_access_loc_conf_t *lcf = conf;

    return lcf->rules != NULL;
}

static sws_int_t
sws_access_init(sws_conf_t *cf)
{
    sws_http_phase_handler_t h = {
        .phase = SWS_HTTP_ACCESS_PHASE, .order = SWS_HTTP_ORDER_ACCESS,
        .handler = sws_access_handler, .module = &sws_module, .active = sws_access_active
    };

    return sws_http_register_phase_handler(cf, &h);
}
