/*
 * tzones: the shared memory zones of the running configuration, listed
 * and inspected through the SDK (sws_shm_zone_count, _get, _find, _info,
 * sws_slab_stat), for the tests (tests/integration/test_shared_zones.py),
 * built against the SDK only.
 *
 *   tzones;    (location) answers one line per zone:
 *                NAME SIZE OWNER PAGES USED FREE
 *              (the page counts 0 for a zone without a slab), then for a
 *              slab zone a line per size class in use:
 *                - CLASS_SIZE USED TOTAL
 *              ?name=NAME: only that zone (404 if there is none)
 */
#include <stdio.h>
#include <string.h>
#include <scalws/scalws.h>

extern sws_module_t sws_module;

static sws_cycle_t  *tzones_cycle;

static u_char *
tzones_zone(u_char *p, u_char *last, sws_shm_zone_t *zone)
{
    sws_shm_zone_info_t  info;
    sws_slab_stat_t      st;
    sws_uint_t           i, n;

    info.size = sizeof(info);
    if (sws_shm_zone_info(tzones_cycle, zone, &info) != SWS_OK) {
        return sws_slprintf(p, last, "%.*s ERROR\n", (int) zone->name.len, zone->name.data);
    }
    p = sws_slprintf(p, last, "%.*s %zu %s %zu %zu %zu\n", (int) info.name.len, info.name.data,
                     info.zone_size, info.owner, info.pages, info.used_pages,
                     info.free_pages);
    if (info.slab == NULL) {
        return p;
    }
    n = sws_slab_nclasses(info.slab);
    for (i = 0; i < n; i++) {
        if (sws_slab_stat(info.slab, i, &st) == SWS_OK && st.used) {
            p = sws_slprintf(p, last, "- %zu %llu %llu\n", st.size,
                             (unsigned long long) st.used, (unsigned long long) st.total);
        }
    }
    return p;
}

static sws_int_t
tzones_handler(sws_http_request_t *r)
{
    static const sws_str_t  type = sws_string("text/plain");
    const sws_str_t        *args = sws_http_args(r);
    sws_shm_zone_t         *zone;
    sws_str_t               body, name;
    sws_uint_t              i, n;
    u_char                 *p, *last;

    body.data = sws_pnalloc(sws_http_pool(r), 65536);
    if (body.data == NULL || tzones_cycle == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    p = body.data;
    last = p + 65536;
    if (args->len > 5 && memcmp(args->data, "name=", 5) == 0) {
        name.data = args->data + 5;
        name.len = args->len - 5;
        zone = sws_shm_zone_find(tzones_cycle, &name);
        if (zone == NULL) {
            return SWS_HTTP_NOT_FOUND;
        }
        p = tzones_zone(p, last, zone);
    } else {
        n = sws_shm_zone_count(tzones_cycle);
        for (i = 0; i < n; i++) {
            p = tzones_zone(p, last, sws_shm_zone_get(tzones_cycle, i));
        }
    }
    body.len = (size_t) (p - body.data);
    return sws_http_send_response(r, SWS_HTTP_OK, &type, &body);
}

static char *
tzones_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    (void) cmd;
    (void) conf;
    return sws_http_set_content_handler(cf, tzones_handler, "tzones") == SWS_OK
           ? SWS_CONF_OK : SWS_CONF_ERROR;
}

static sws_int_t
tzones_init_worker(sws_cycle_t *cycle)
{
    tzones_cycle = cycle;               /* the configuration this worker runs */
    return SWS_OK;
}

static const sws_command_t tzones_commands[] = {
    { "tzones", SWS_HTTP_LOC_CONF | SWS_CONF_NOARGS, tzones_directive,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "tzones",
    .commands = tzones_commands,
    .init_worker = tzones_init_worker,
};
