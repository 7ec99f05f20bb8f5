/*
 * The sub_filter module: nginx's sub_filter, a body filter replacing
 * strings in responses as they stream. Shared between its files:
 *
 *   sws_sub_filter_match.c    the streaming matcher (no request, no pool:
 *                             tests/fuzz/fuzz_sub_filter.c drives it alone)
 *   sws_sub_filter_module.c   directives, the header and body filters
 */
#ifndef SWS_SUB_FILTER_H
#define SWS_SUB_FILTER_H

#include <scalws/sws_types.h>

/*
 * The strings to replace, as nginx matches them: ASCII case ignored, the
 * leftmost occurrence first, and of several strings found at one place
 * the first configured; the text after a replacement is searched again
 * (a replacement is never searched). With once, each string is replaced
 * at most once.
 */
typedef struct {
    const u_char   *data;       /* lower case */
    size_t          len;        /* > 0 */
} sws_sub_pattern_t;

typedef struct {
    const sws_sub_pattern_t *pats;
    sws_uint_t               n;
    size_t                   max_len;
    unsigned                 once:1;
} sws_sub_set_t;

/* The replacement of pattern i, asked for when it is first found
 * (variables are evaluated then, as nginx does). SWS_OK or SWS_ERROR. */
typedef sws_int_t (*sws_sub_value_pt)(void *data, sws_uint_t i, sws_str_t *value);

/* One response's matching state. Its memory: sws_sub_state_size(set),
 * zeroed, then sws_sub_state_init(). */
typedef struct {
    const sws_sub_set_t *set;
    sws_sub_value_pt     value;
    void                *value_data;
    const u_char        *pend;      /* output not written yet */
    size_t               pend_len;
    size_t               hold_len;  /* bytes kept: a match may start there */
    sws_uint_t           left;      /* patterns not done (once) */
    u_char              *hold;      /* max_len bytes */
    u_char              *done;      /* n flags (once) */
    uint16_t             first[256];  /* patterns starting with each byte */
} sws_sub_state_t;

size_t sws_sub_state_size(const sws_sub_set_t *set);
void   sws_sub_state_init(sws_sub_state_t *st, const sws_sub_set_t *set,
    sws_sub_value_pt value, void *value_data);

/* A body transform's coder (sws_http_transform_pt without the request):
 * mode SWS_HTTP_TRANSFORM_RUN, _FLUSH or _FINISH. */
sws_int_t sws_sub_match_run(sws_sub_state_t *st, const u_char **in, const u_char *in_end,
    u_char **out, u_char *out_end, int mode);

#endif
