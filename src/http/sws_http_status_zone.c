/*
 * status_zone NAME (nginx Plus's): requests grouped by server block or by
 * location, for the admin module (docs/admin.md). In a server block it
 * names the server's zone, which every request the server ends counts
 * in; in a location, the location's zone, inherited by the locations
 * nested in it ("off" there: none). Several servers (or locations) may
 * share a zone. A request counts where it ends (after internal redirects),
 * at the log phase: by the class and code of its status, or as discarded
 * when no response head went out (the client left, 444), with its bytes
 * in and out and its time.
 *
 * Each zone is a shared zone of its own ("server_zone:NAME",
 * "location_zone:NAME") holding a row of counters per worker slot (the
 * slots of the connection counters, sws_status_slot): a worker adds to
 * its own row with plain adds, no lock, no atomic; a reader sums the rows.
 * A reload that keeps a zone keeps its counts (the same name and size
 * take the mapping over); a zone the new configuration drops goes with
 * the old one.
 *
 * The handler is a LOG phase handler left out of every location without
 * a zone (active()): those requests pay nothing for it.
 */
#include "sws_http_core.h"
#include "sws_times_internal.h"

/* The codes counted one by one (the others by class only); a row's
 * codes[] follows this order. */
static const uint16_t  sws_http_zone_codes[] = {
    100, 101, 102, 103,
    200, 201, 202, 203, 204, 205, 206, 207, 208, 226,
    300, 301, 302, 303, 304, 305, 307, 308,
    400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415,
    416, 417, 421, 422, 423, 424, 425, 426, 428, 429, 431, 451,
    500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511
};

#define SWS_HTTP_ZONE_NCODES  (sizeof(sws_http_zone_codes) / sizeof(sws_http_zone_codes[0]))
#define SWS_HTTP_ZONE_NOCODE  0xff

_Static_assert(SWS_HTTP_ZONE_NCODES <= SWS_HTTP_STATUS_ZONE_CODES,
               "sws_http_status_zone_codes() fills what SWS_HTTP_STATUS_ZONE_CODES says");

/* A status's class (0: 1xx .. 4: 5xx) << 8 | its place in codes[] (NOCODE:
 * counted by class only): no division on the request's path. */
static uint16_t  sws_http_zone_code_index[600];

/* A worker's row of one zone. */
typedef struct {
    uint64_t  responses[5];
    uint64_t  discarded;
    uint64_t  bytes_in;
    uint64_t  bytes_out;
    uint64_t  time_ms;
    uint64_t  codes[SWS_HTTP_ZONE_NCODES];
} sws_http_zone_row_t;

typedef struct {
    sws_str_t             name;
    sws_uint_t            location;     /* a location's zone, not a server's */
    sws_http_zone_row_t  *rows;         /* SWS_STATUS_SLOTS, in the shared zone */
} sws_http_zone_t;

typedef struct {
    sws_array_t  zones;                 /* sws_http_zone_t *, as declared */
} sws_http_zone_main_conf_t;

typedef struct {
    sws_http_zone_t  *server;           /* NULL: none */
    sws_http_zone_t  *location;
    unsigned          server_set:1;
    unsigned          location_set:1;
} sws_http_zone_loc_conf_t;

static void *sws_http_zone_create_main_conf(sws_conf_t *cf);
static void *sws_http_zone_create_loc_conf(sws_conf_t *cf);
static char *sws_http_zone_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_http_zone_postconfiguration(sws_conf_t *cf);
static sws_int_t sws_http_zone_init_worker(sws_cycle_t *cycle);
static char *sws_http_zone_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf);

static const sws_command_t  sws_http_zone_commands[] = {
    { "status_zone", SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF | SWS_CONF_TAKE1,
      sws_http_zone_directive, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    sws_null_command
};

sws_module_t  sws_http_status_zone_module = {
    SWS_MODULE_ABI,
    .name = "http_status_zone",
    .commands = sws_http_zone_commands,
    .create_main_conf = sws_http_zone_create_main_conf,
    .create_loc_conf = sws_http_zone_create_loc_conf,
    .merge_loc_conf = sws_http_zone_merge_loc_conf,
    .postconfiguration = sws_http_zone_postconfiguration,
    .init_worker = sws_http_zone_init_worker,
};

/* This process's row of every zone (sws_status_slot), found once. */
static sws_uint_t  sws_http_zone_slot;

/* ---- counting ---------------------------------------------------------- */

static void
sws_http_zone_count(sws_http_zone_row_t *row, sws_uint_t cls, sws_uint_t code,
    uint64_t in, uint64_t out, uint64_t ms)
{
    if (cls < 5) {
        row->responses[cls]++;
        if (code != SWS_HTTP_ZONE_NOCODE) {
            row->codes[code]++;
        }
    } else {
        row->discarded++;
    }
    row->bytes_in += in;
    row->bytes_out += out;
    row->time_ms += ms;
}

static sws_int_t
sws_http_zone_handler(sws_http_request_t *r)
{
    sws_http_zone_loc_conf_t *zlcf = r->loc_conf[sws_http_status_zone_module.index];
    sws_uint_t                slot = sws_http_zone_slot;
    sws_uint_t                cls = 5, code = SWS_HTTP_ZONE_NOCODE;
    sws_msec_t                ms;
    uint64_t                  in, out;
    off_t                     sent;

    /* (zlcf NULL: a level without its own phase list runs every handler) */
    if (zlcf == NULL || sws_http_is_subrequest(r)) {
        return SWS_OK;                 /* a subrequest's main request counts */
    }
    sent = r->proto->bytes_sent(r);    /* (first: fewer values live across the call) */
    out = sent > 0 ? (uint64_t) sent : 0;
    /* A response head went out: its status. None: discarded. */
    if (r->header_sent && r->status >= 100 && r->status < 600) {
        cls = sws_http_zone_code_index[r->status] >> 8;
        code = sws_http_zone_code_index[r->status] & 0xff;
    }
    in = (uint64_t) r->head_length + (r->body ? (uint64_t) r->body->received : 0);
    ms = sws_now_msec() - r->start_msec;         /* as $request_time */
    if (ms < 0) {
        ms = 0;
    }
    if (zlcf->server) {
        sws_http_zone_count(&zlcf->server->rows[slot], cls, code, in, out, (uint64_t) ms);
    }
    if (zlcf->location) {
        sws_http_zone_count(&zlcf->location->rows[slot], cls, code, in, out, (uint64_t) ms);
    }
    return SWS_OK;
}

/* Only where a zone counts. */
static sws_uint_t
sws_http_zone_active(const void *conf)
{
    const sws_http_zone_loc_conf_t *zlcf = conf;

    return zlcf != NULL && (zlcf->server != NULL || zlcf->location != NULL);
}

/* ---- configuration ----------------------------------------------------- */

static void *
sws_http_zone_create_main_conf(sws_conf_t *cf)
{
    sws_http_zone_main_conf_t *zmcf = sws_pcalloc(cf->pool, sizeof(*zmcf));

    if (zmcf == NULL
        || sws_array_init(&zmcf->zones, cf->pool, 4, sizeof(sws_http_zone_t *)) != SWS_OK)
    {
        return NULL;
    }
    return zmcf;
}

static void *
sws_http_zone_create_loc_conf(sws_conf_t *cf)
{
    return sws_pcalloc(cf->pool, sizeof(sws_http_zone_loc_conf_t));
}

static char *
sws_http_zone_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_http_zone_loc_conf_t *prev = parent, *conf = child;

    (void) cf;
    if (!conf->server_set) {
        conf->server = prev->server;
        conf->server_set = prev->server_set;
    }
    if (!conf->location_set) {
        conf->location = prev->location;
        conf->location_set = prev->location_set;
    }
    return SWS_CONF_OK;
}

static sws_int_t
sws_http_zone_init(sws_shm_zone_t *zone, void *old_data)
{
    (void) old_data;                   /* kept memory: the counts go on */
    zone->data = zone->addr;
    return SWS_OK;
}

/* The zone of that name and kind, declared now if it is the first use. */
static sws_http_zone_t *
sws_http_zone_get(sws_conf_t *cf, const sws_str_t *name, sws_uint_t location)
{
    sws_http_zone_main_conf_t  *zmcf = sws_conf_http_main_conf(cf, &sws_http_status_zone_module);
    sws_http_zone_t           **zones = zmcf->zones.elts, *z, **zp;
    sws_shm_zone_t             *shm;
    sws_str_t                   shm_name;
    const char                 *prefix = location ? "location_zone:" : "server_zone:";
    size_t                      n = strlen(prefix);
    sws_uint_t                  i;

    for (i = 0; i < zmcf->zones.nelts; i++) {
        if (zones[i]->location == location && sws_str_eq(&zones[i]->name, name)) {
            return zones[i];
        }
    }
    shm_name.len = n + name->len;
    shm_name.data = sws_pnalloc(cf->pool, shm_name.len);
    z = sws_pcalloc(cf->pool, sizeof(sws_http_zone_t));
    if (shm_name.data == NULL || z == NULL) {
        return NULL;
    }
    memcpy(shm_name.data, prefix, n);
    memcpy(shm_name.data + n, name->data, name->len);
    shm = sws_shm_zone_add(cf, &shm_name, sizeof(sws_http_zone_row_t) * SWS_STATUS_SLOTS,
                           sws_http_zone_init, &sws_http_status_zone_module);
    zp = sws_array_push(&zmcf->zones);
    if (shm == NULL || zp == NULL) {
        return NULL;
    }
    z->name.data = shm_name.data + n;
    z->name.len = name->len;
    z->location = location;
    z->rows = shm->data;
    *zp = z;
    return z;
}

/* status_zone NAME | off */
static char *
sws_http_zone_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_zone_loc_conf_t *zlcf = conf;
    const sws_str_t          *name = sws_conf_arg(cf, 1);
    sws_uint_t                location = (cf->cmd_type & SWS_HTTP_SRV_CONF) == 0;
    sws_http_zone_t          *z = NULL;

    (void) cmd;
    if (location ? zlcf->location_set : zlcf->server_set) {
        return "is duplicate";
    }
    if (name->len == 0 || memchr(name->data, '$', name->len)) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid zone name \"%.*s\" in "
                           "\"status_zone\": a name, without variables",
                           (int) name->len, name->data);
        return SWS_CONF_ERROR;
    }
    if (!sws_str_eq_cstr(name, "off")) {
        z = sws_http_zone_get(cf, name, location);
        if (z == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    if (location) {
        zlcf->location = z;
        zlcf->location_set = 1;
    } else {
        zlcf->server = z;
        zlcf->server_set = 1;
    }
    return SWS_CONF_OK;
}

static sws_int_t
sws_http_zone_postconfiguration(sws_conf_t *cf)
{
    sws_http_zone_main_conf_t *zmcf = sws_conf_http_main_conf(cf, &sws_http_status_zone_module);
    sws_http_phase_handler_t   h = {
        .phase = SWS_HTTP_LOG_PHASE, .order = SWS_HTTP_ORDER_DEFAULT,
        .handler = sws_http_zone_handler, .module = &sws_http_status_zone_module,
        .active = sws_http_zone_active
    };
    sws_uint_t                 i;

    if (zmcf->zones.nelts == 0) {
        return SWS_OK;                 /* no zone: no handler anywhere */
    }
    for (i = 100; i < 600; i++) {
        sws_http_zone_code_index[i] = (uint16_t) ((i / 100 - 1) << 8 | SWS_HTTP_ZONE_NOCODE);
    }
    for (i = 0; i < SWS_HTTP_ZONE_NCODES; i++) {
        sws_http_zone_code_index[sws_http_zone_codes[i]] &= 0xff00;
        sws_http_zone_code_index[sws_http_zone_codes[i]] |= (uint16_t) i;
    }
    return sws_http_register_phase_handler(cf, &h);
}

static sws_int_t
sws_http_zone_init_worker(sws_cycle_t *cycle)
{
    (void) cycle;
    sws_http_zone_slot = sws_status_slot();
    return SWS_OK;
}

/* ---- the SDK: what the zones counted ----------------------------------- */

static sws_http_zone_t *
sws_http_zone_at(sws_http_request_t *r, sws_uint_t i)
{
    sws_http_zone_main_conf_t *zmcf;

    if (r == NULL || r->main_conf == NULL) {
        return NULL;
    }
    zmcf = r->main_conf[sws_http_status_zone_module.index];
    if (zmcf == NULL || i >= zmcf->zones.nelts) {
        return NULL;
    }
    return ((sws_http_zone_t **) zmcf->zones.elts)[i];
}

sws_int_t
sws_http_status_zone_stats(sws_http_request_t *r, sws_uint_t i,
    sws_http_status_zone_stats_t *st)
{
    sws_http_status_zone_stats_t  out;
    sws_http_zone_t              *z = sws_http_zone_at(r, i);
    sws_http_zone_row_t          *row;
    sws_uint_t                    s, k;
    size_t                        size = st->size;

    if (size < offsetof(sws_http_status_zone_stats_t, reserved)) {
        return SWS_ERROR;
    }
    if (z == NULL) {
        return SWS_DECLINED;
    }
    sws_memzero(&out, sizeof(out));
    out.name = z->name;
    out.location = z->location;
    for (s = 0; s < SWS_STATUS_SLOTS; s++) {
        row = &z->rows[s];
        for (k = 0; k < 5; k++) {
            out.responses[k] += __atomic_load_n(&row->responses[k], __ATOMIC_RELAXED);
        }
        out.discarded += __atomic_load_n(&row->discarded, __ATOMIC_RELAXED);
        out.bytes_in += __atomic_load_n(&row->bytes_in, __ATOMIC_RELAXED);
        out.bytes_out += __atomic_load_n(&row->bytes_out, __ATOMIC_RELAXED);
        out.time_ms += __atomic_load_n(&row->time_ms, __ATOMIC_RELAXED);
    }
    out.requests = out.discarded;
    for (k = 0; k < 5; k++) {
        out.requests += out.responses[k];
    }
    size = sws_min(size, sizeof(out));
    out.size = size;
    memcpy(st, &out, size);
    return SWS_OK;
}

sws_int_t
sws_http_status_zone_codes(sws_http_request_t *r, sws_uint_t i,
    sws_http_status_code_count_t *c, sws_uint_t *n)
{
    sws_http_zone_t  *z = sws_http_zone_at(r, i);
    sws_uint_t        s, k, filled = 0;
    uint64_t          count;

    if (z == NULL) {
        return SWS_DECLINED;
    }
    for (k = 0; k < SWS_HTTP_ZONE_NCODES && filled < *n; k++) {
        count = 0;
        for (s = 0; s < SWS_STATUS_SLOTS; s++) {
            count += __atomic_load_n(&z->rows[s].codes[k], __ATOMIC_RELAXED);
        }
        if (count) {
            c[filled].code = sws_http_zone_codes[k];
            c[filled++].count = count;
        }
    }
    *n = filled;
    return SWS_OK;
}
