/*
 * Typed directive setters: each parses the directive's first argument (all
 * of them for str_array) and stores it at conf + cmd->offset. A field that
 * is no longer "unset" means the directive was repeated: "is duplicate".
 */
#include <stdio.h>
#include <time.h>
#include "sws_conf_internal.h"

#define sws_conf_field(conf, cmd, type)  ((type *) ((char *) (conf) + (cmd)->offset))


/* Logs `invalid value "X" in "NAME" directive[, HINT]` at the directive. */
static char *
sws_conf_invalid(sws_conf_t *cf, const sws_command_t *cmd, const char *hint)
{
    sws_str_t  *value = sws_conf_arg(cf, 1);

    sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid value \"%.*s\" in \"%s\" directive%s",
                       (int) value->len, value->data, cmd->name, hint ? hint : "");

    return SWS_CONF_ERROR;
}


char *
sws_conf_set_flag_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_str_t  *value = sws_conf_arg(cf, 1);
    sws_int_t  *field = sws_conf_field(conf, cmd, sws_int_t);

    if (*field != SWS_UNSET) {
        return "is duplicate";
    }

    if (sws_str_caseeq_cstr(value, "on")) {
        *field = 1;

    } else if (sws_str_caseeq_cstr(value, "off")) {
        *field = 0;

    } else {
        return sws_conf_invalid(cf, cmd, ", it must be \"on\" or \"off\"");
    }

    return SWS_CONF_OK;
}


char *
sws_conf_set_num_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_str_t  *value = sws_conf_arg(cf, 1);
    sws_int_t  *field = sws_conf_field(conf, cmd, sws_int_t);

    if (*field != SWS_UNSET) {
        return "is duplicate";
    }

    *field = sws_atoi(value->data, value->len);

    if (*field == SWS_ERROR) {
        *field = SWS_UNSET;
        return sws_conf_invalid(cf, cmd, NULL);
    }

    return SWS_CONF_OK;
}


char *
sws_conf_set_size_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    ssize_t     size;
    size_t     *field = sws_conf_field(conf, cmd, size_t);
    sws_str_t  *value = sws_conf_arg(cf, 1);

    if (*field != SWS_UNSET_SIZE) {
        return "is duplicate";
    }

    size = sws_parse_size(value);
    if (size == SWS_ERROR) {
        return sws_conf_invalid(cf, cmd, NULL);
    }

    *field = (size_t) size;

    return SWS_CONF_OK;
}


char *
sws_conf_set_msec_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_msec_t  ms;
    sws_msec_t *field = sws_conf_field(conf, cmd, sws_msec_t);

    if (*field != SWS_UNSET_MSEC) {
        return "is duplicate";
    }

    ms = sws_parse_time_ms(sws_conf_arg(cf, 1));
    if (ms == SWS_ERROR) {
        return sws_conf_invalid(cf, cmd, NULL);
    }

    *field = ms;

    return SWS_CONF_OK;
}


char *
sws_conf_set_sec_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    time_t      *field = sws_conf_field(conf, cmd, time_t);
    sws_msec_t   ms;

    if (*field != (time_t) SWS_UNSET) {
        return "is duplicate";
    }

    ms = sws_parse_time_ms(sws_conf_arg(cf, 1));
    if (ms == SWS_ERROR) {
        return sws_conf_invalid(cf, cmd, NULL);
    }

    *field = (time_t) (ms / 1000);

    return SWS_CONF_OK;
}


/* A pool copy whose data is never NULL, even for "". */
static sws_int_t
sws_conf_copy_str(sws_conf_t *cf, sws_str_t *dst, const sws_str_t *src)
{
    dst->data = sws_pnalloc(cf->pool, src->len + 1);
    if (dst->data == NULL) {
        return SWS_ERROR;
    }

    sws_memcpy(dst->data, src->data, src->len);
    dst->data[src->len] = '\0';
    dst->len = src->len;

    return SWS_OK;
}


char *
sws_conf_set_str_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_str_t  *field = sws_conf_field(conf, cmd, sws_str_t);

    if (field->data != NULL) {
        return "is duplicate";
    }

    if (sws_conf_copy_str(cf, field, sws_conf_arg(cf, 1)) != SWS_OK) {
        return SWS_CONF_ERROR;
    }

    return SWS_CONF_OK;
}


/* Appends every argument (usually the one) to the array, creating it. */
char *
sws_conf_set_str_array_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_str_t     *s;
    sws_uint_t     i;
    sws_array_t  **field = sws_conf_field(conf, cmd, sws_array_t *);

    if (*field == NULL) {
        *field = sws_array_create(cf->pool, 4, sizeof(sws_str_t));
        if (*field == NULL) {
            return SWS_CONF_ERROR;
        }
    }

    for (i = 1; i < sws_conf_nargs(cf); i++) {
        s = sws_array_push(*field);
        if (s == NULL || sws_conf_copy_str(cf, s, sws_conf_arg(cf, i)) != SWS_OK) {
            return SWS_CONF_ERROR;
        }
    }

    return SWS_CONF_OK;
}


/* cmd->post: a sws_conf_enum_t table ending with an empty name. */
char *
sws_conf_set_enum_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    char                   hint[512];
    size_t                 n;
    sws_str_t             *value = sws_conf_arg(cf, 1);
    sws_uint_t            *field = sws_conf_field(conf, cmd, sws_uint_t);
    const sws_conf_enum_t *e;

    if (*field != SWS_UNSET_UINT) {
        return "is duplicate";
    }

    for (e = cmd->post; e->name.len != 0; e++) {
        if (sws_str_eq(value, &e->name)) {
            *field = e->value;
            return SWS_CONF_OK;
        }
    }

    /* ", it must be one of "a", "b", "c"" */
    n = 0;
    hint[0] = '\0';

    for (e = cmd->post; e->name.len != 0 && n < sizeof(hint); e++) {
        n += (size_t) snprintf(hint + n, sizeof(hint) - n, "%s\"%.*s\"",
                               e == cmd->post ? ", it must be one of " : ", ",
                               (int) e->name.len, e->name.data);
    }

    return sws_conf_invalid(cf, cmd, hint);
}


/* Like str, then made absolute against the prefix (not the conf prefix). */
char *
sws_conf_set_path_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_str_t  *field = sws_conf_field(conf, cmd, sws_str_t);

    if (field->data != NULL) {
        return "is duplicate";
    }

    *field = *sws_conf_arg(cf, 1);

    if (sws_conf_full_name(cf, field, 0) != SWS_OK) {
        field->data = NULL;
        return SWS_CONF_ERROR;
    }

    return SWS_CONF_OK;
}


int
sws_conf_param(const sws_str_t *arg, const char *name, sws_str_t *value)
{
    size_t len = strlen(name);

    if (arg->len <= len || memcmp(arg->data, name, len) != 0) {
        return 0;
    }
    value->data = arg->data + len;
    value->len = arg->len - len;
    return 1;
}


/*
 * The hash-size directives of nginx (types_hash_max_size and the others):
 * our hashes are sized from what they hold, so the value only has to be a
 * valid one (a size from 1 to 16m, "4k" allowed); it is not stored.
 */
char *
sws_conf_set_hash_size_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    ssize_t size = sws_parse_size(sws_conf_arg(cf, 1));

    (void) conf;
    if (size == SWS_ERROR || size < 1 || size > 16 * 1024 * 1024) {
        return sws_conf_invalid(cf, cmd, ", it must be a number from 1 to 16m");
    }
    return SWS_CONF_OK;
}


char *
sws_conf_set_status_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    static const sws_conf_range_t  errors = { 400, 599 };
    const sws_conf_range_t        *range = cmd->post ? cmd->post : &errors;
    sws_str_t                     *value = sws_conf_arg(cf, 1);
    sws_int_t                     *field = sws_conf_field(conf, cmd, sws_int_t);
    sws_int_t                      n;

    if (*field != SWS_UNSET) {
        return "is duplicate";
    }
    n = value->len == 3 ? sws_atoi(value->data, value->len) : SWS_ERROR;
    if (n < range->min || n > range->max) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "value must be between %d and %d in \"%s\"",
                           (int) range->min, (int) range->max, cmd->name);
        return SWS_CONF_ERROR;
    }
    *field = n;
    return SWS_CONF_OK;
}

char *
sws_conf_set_log_level_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    static const sws_conf_enum_t  levels[] = {
        { sws_string("info"), SWS_LOG_INFO },
        { sws_string("notice"), SWS_LOG_NOTICE },
        { sws_string("warn"), SWS_LOG_WARN },
        { sws_string("error"), SWS_LOG_ERR },
        { sws_null_string, 0 }
    };
    sws_command_t  c = *cmd;

    c.post = levels;
    return sws_conf_set_enum_slot(cf, &c, conf);
}
