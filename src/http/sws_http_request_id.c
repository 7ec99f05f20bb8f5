/* request_id on: X-Request-Id kept from the client when well-formed (1 to
 * 64 characters of letters, digits, '-', '_', '.'), otherwise 32 random hex
 * digits; added to the response and available to the log as $request_id. */
#include <sys/random.h>
#include <unistd.h>
#include "sws_http_core.h"

static uint64_t sws_rid_state[2];

static uint64_t
sws_rid_next(void)
{
    /* xorshift128+: fast, and seeded from the kernel on first use in each
     * worker (the master never draws, so forked workers don't share one). */
    uint64_t s1 = sws_rid_state[0];
    const uint64_t s0 = sws_rid_state[1];

    if (sws_unlikely(s0 == 0 && s1 == 0)) {
        if (getrandom(sws_rid_state, sizeof(sws_rid_state), 0) != sizeof(sws_rid_state)
            || (sws_rid_state[0] | sws_rid_state[1]) == 0)
        {
            sws_rid_state[0] = (uint64_t) getpid() * 0x9e3779b97f4a7c15ULL ^ (uint64_t) sws_current_msec();
            sws_rid_state[1] = 0x2545f4914f6cdd1dULL;
        }
        return sws_rid_next();
    }
    sws_rid_state[0] = s0;
    s1 ^= s1 << 23;
    sws_rid_state[1] = s1 ^ s0 ^ (s1 >> 17) ^ (s0 >> 26);
    return sws_rid_state[1] + s0;
}

static int
sws_http_request_id_valid(const sws_str_t *v)
{
    size_t i;

    if (v->len == 0 || v->len > 64) {
        return 0;
    }
    for (i = 0; i < v->len; i++) {
        u_char c = v->data[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
              || c == '-' || c == '_' || c == '.'))
        {
            return 0;
        }
    }
    return 1;
}

void
sws_http_request_id_init(sws_http_request_t *r)
{
    uint64_t rnd[2];

    if (r->h_request_id && sws_http_request_id_valid(r->h_request_id)) {
        r->request_id = *r->h_request_id;
        return;
    }
    rnd[0] = sws_rid_next();
    rnd[1] = sws_rid_next();
    sws_hex_dump(r->request_id_buf, (u_char *) rnd, sizeof(rnd));
    r->request_id.data = r->request_id_buf;
    r->request_id.len = 32;
}
