/*
 * Configuration: directives, their contexts and argument counts, and typed
 * setters. The configuration (nginx syntax or YAML) is read into a tree of
 * directives first, then each directive is dispatched to the module that
 * declares it.
 */
#ifndef SWS_CONF_H
#define SWS_CONF_H

#include <scalws/sws_types.h>
#include <scalws/sws_array.h>

/* Argument counts (bit flags, may be combined: SWS_CONF_TAKE12). */
#define SWS_CONF_NOARGS   0x00000001
#define SWS_CONF_TAKE1    0x00000002
#define SWS_CONF_TAKE2    0x00000004
#define SWS_CONF_TAKE3    0x00000008
#define SWS_CONF_TAKE4    0x00000010
#define SWS_CONF_TAKE5    0x00000020
#define SWS_CONF_TAKE6    0x00000040
#define SWS_CONF_TAKE7    0x00000080
#define SWS_CONF_TAKE12   (SWS_CONF_TAKE1 | SWS_CONF_TAKE2)
#define SWS_CONF_TAKE13   (SWS_CONF_TAKE1 | SWS_CONF_TAKE3)
#define SWS_CONF_TAKE23   (SWS_CONF_TAKE2 | SWS_CONF_TAKE3)
#define SWS_CONF_TAKE123  (SWS_CONF_TAKE1 | SWS_CONF_TAKE2 | SWS_CONF_TAKE3)
#define SWS_CONF_TAKE1234 (SWS_CONF_TAKE123 | SWS_CONF_TAKE4)
#define SWS_CONF_ARGS_MASK 0x000000ff
#define SWS_CONF_FLAG     0x00000100   /* exactly one of on|off */
#define SWS_CONF_1MORE    0x00000200
#define SWS_CONF_2MORE    0x00000400
#define SWS_CONF_ANY      0x00000800
#define SWS_CONF_BLOCK    0x00001000   /* followed by { ... } */

/* Contexts a directive may appear in. */
#define SWS_MAIN_CONF     0x01000000   /* top level */
#define SWS_EVENT_CONF    0x02000000   /* events { } */
#define SWS_HTTP_MAIN_CONF 0x04000000  /* http { } */
#define SWS_HTTP_SRV_CONF 0x08000000   /* server { } */
#define SWS_HTTP_LOC_CONF 0x10000000   /* location { } */
#define SWS_HTTP_UPS_CONF 0x20000000   /* upstream { } */
#define SWS_HTTP_LIF_CONF 0x40000000   /* in an "if" block of a server */
#define SWS_CONF_CTX_MASK 0x7f000000

/* Where the setter's conf pointer comes from (sws_command_t.conf). */
#define SWS_CONF_MAIN_OFFSET      0    /* the module's main (top-level) conf */
#define SWS_HTTP_MAIN_CONF_OFFSET 1
#define SWS_HTTP_SRV_CONF_OFFSET  2
#define SWS_HTTP_LOC_CONF_OFFSET  3

#define SWS_CONF_OK     NULL
#define SWS_CONF_ERROR  ((char *) -1)

struct sws_command_s {
    const char  *name;
    uint32_t     type;      /* contexts | argument counts */
    /* Returns SWS_CONF_OK, SWS_CONF_ERROR (already reported), or a message
     * that the core reports as "<message> in FILE:LINE". */
    char      *(*set)(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
    sws_uint_t   conf;      /* SWS_*_OFFSET */
    size_t       offset;    /* of the field the typed setters write */
    const void  *post;      /* setter-specific: enum table, bounds */
};

#define sws_null_command  { NULL, 0, NULL, 0, 0, NULL }

/* An enum value table for sws_conf_set_enum_slot (ends with name.len 0). */
typedef struct {
    sws_str_t   name;
    sws_uint_t  value;
} sws_conf_enum_t;

/* Bounds for sws_conf_set_status_slot (both included). */
typedef struct {
    sws_int_t   min;
    sws_int_t   max;
} sws_conf_range_t;

/* Arguments of the directive being set: arg 0 is the directive name. */
sws_uint_t   sws_conf_nargs(sws_conf_t *cf);
sws_str_t   *sws_conf_arg(sws_conf_t *cf, sws_uint_t i);
sws_pool_t  *sws_conf_pool(sws_conf_t *cf);
sws_cycle_t *sws_conf_cycle(sws_conf_t *cf);
sws_log_t   *sws_conf_log(sws_conf_t *cf);
const char  *sws_conf_file(sws_conf_t *cf);
sws_uint_t   sws_conf_line(sws_conf_t *cf);
/* Report an error at the current directive: "MSG in FILE:LINE". */
void sws_conf_log_error(sws_uint_t level, sws_conf_t *cf, int err, const char *fmt, ...)
    SWS_PRINTF(4, 5);
/* Resolve a path against the prefix (for relative paths); NUL-terminated. */
sws_int_t sws_conf_full_name(sws_conf_t *cf, sws_str_t *name, int conf_prefix);

/* The current http-level confs of a module while parsing (for directives that
 * need a sibling level, e.g. a location directive touching its server). */
void *sws_conf_http_main_conf(sws_conf_t *cf, const sws_module_t *m);
void *sws_conf_http_srv_conf(sws_conf_t *cf, const sws_module_t *m);
void *sws_conf_http_loc_conf(sws_conf_t *cf, const sws_module_t *m);
/* Context flag of the block being parsed (SWS_MAIN_CONF, SWS_HTTP_LOC_CONF ...). */
uint32_t sws_conf_context(sws_conf_t *cf);

/*
 * A block directive whose block holds data, not directives (map,
 * split_clients): handler runs for each entry of the block in order, with
 * cf at that entry, so sws_conf_nargs()/sws_conf_arg() (0: the first word),
 * sws_conf_line() and sws_conf_log_error() are the entry's. A message it
 * returns is logged at the entry's line; an entry followed by a block of
 * its own is refused. Returns SWS_CONF_OK or SWS_CONF_ERROR.
 */
typedef char *(*sws_conf_entry_pt)(sws_conf_t *cf, void *data);
char *sws_conf_parse_entries(sws_conf_t *cf, sws_conf_entry_pt handler, void *data);

/* "name=value" parameters (listen backlog=, upstream weight=, ...): 1 and
 * value set when arg is name (which ends in '=') followed by a non-empty
 * value, else 0. */
int sws_conf_param(const sws_str_t *arg, const char *name, sws_str_t *value);

/* Typed setters: write the parsed value at conf + cmd->offset, refusing a
 * directive that was already set at this level ("is duplicate"). */
char *sws_conf_set_flag_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf);  /* sws_int_t 0/1 */
char *sws_conf_set_num_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf);   /* sws_int_t >= 0 */
char *sws_conf_set_size_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf);  /* size_t */
char *sws_conf_set_msec_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf);  /* sws_msec_t */
char *sws_conf_set_sec_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf);   /* time_t seconds */
char *sws_conf_set_str_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf);   /* sws_str_t */
/* nginx's *_hash_max_size / *_hash_bucket_size: the value is checked (1 to
 * 16m) and ignored, our hashes size themselves; offset unused. */
char *sws_conf_set_hash_size_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
char *sws_conf_set_str_array_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf); /* sws_array_t * of sws_str_t, appends */
char *sws_conf_set_enum_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf);  /* sws_uint_t, post = sws_conf_enum_t[] */
char *sws_conf_set_path_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf);  /* sws_str_t, made absolute against prefix */
/* ABI 1.3: an HTTP status code (sws_int_t), post = sws_conf_range_t * or
 * NULL for 400..599 (nginx's limit_req_status ...); a log level
 * (sws_uint_t SWS_LOG_*) out of info | notice | warn | error (nginx's
 * limit_req_log_level ...). */
char *sws_conf_set_status_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
char *sws_conf_set_log_level_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf);

/* Merge helpers. */
#define sws_conf_merge_value(conf, prev, def) \
    do { if ((conf) == SWS_UNSET) (conf) = ((prev) == SWS_UNSET) ? (def) : (prev); } while (0)
#define sws_conf_merge_uint_value(conf, prev, def) \
    do { if ((conf) == SWS_UNSET_UINT) (conf) = ((prev) == SWS_UNSET_UINT) ? (def) : (prev); } while (0)
#define sws_conf_merge_size_value(conf, prev, def) \
    do { if ((conf) == SWS_UNSET_SIZE) (conf) = ((prev) == SWS_UNSET_SIZE) ? (def) : (prev); } while (0)
#define sws_conf_merge_msec_value(conf, prev, def) \
    do { if ((conf) == SWS_UNSET_MSEC) (conf) = ((prev) == SWS_UNSET_MSEC) ? (def) : (prev); } while (0)
#define sws_conf_merge_str_value(conf, prev, def) \
    do { if ((conf).data == NULL) { if ((prev).data) { (conf) = (prev); } else { \
         (conf).len = sizeof(def) - 1; (conf).data = (u_char *) (def); } } } while (0)
#define sws_conf_merge_ptr_value(conf, prev, def) \
    do { if ((conf) == NULL) (conf) = ((prev) == NULL) ? (def) : (prev); } while (0)

#endif
