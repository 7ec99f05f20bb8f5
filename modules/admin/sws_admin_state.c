/*
 * The state file (admin { state_file PATH; }): the upstream servers as the
 * operators changed them at run time, kept across reloads and restarts.
 *
 * After each change through the API, a worker writes the whole run-time
 * state of every group that takes changes, as the shared lists have it:
 *
 *   {"upstreams": {"back": [{"server": "127.0.0.1:8081", "weight": 2,
 *                            "state": "draining", "added": true}, ...]}}
 *
 * under a lock (so the last file written is the last state seen), to a
 * temporary file renamed over the old: the workers write in the file's
 * directory, which the master makes for them when it is not there. When a configuration is loaded
 * (init_master: at start and at every reload) the master applies it again:
 * servers added come back, configured ones take the state and weight the
 * operator gave them. A group or server the configuration no longer has
 * is skipped, with a warning.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include "sws_admin.h"

/* The configured servers of group (the stats list them group by group):
 * how many, and the groups in order, once each. */
static sws_uint_t
sws_admin_configured(const sws_str_t *group)
{
    sws_http_upstream_stats_t  us;
    sws_uint_t                 i, n = 0, count = sws_http_upstream_stats_count();

    for (i = 0; i < count; i++) {
        sws_memzero(&us, sizeof(us));
        us.size = sizeof(us);
        if (sws_http_upstream_stats_read(i, &us) == SWS_OK && sws_str_eq(&us.upstream, group)) {
            n++;
        }
    }
    return n;
}

static void
sws_admin_state_write(sws_admin_out_t *o, sws_pool_t *pool)
{
    sws_http_upstream_stats_t  us, ls;
    sws_str_t                  group = { 0, NULL };
    sws_uint_t                 i, k, nconf, count = sws_http_upstream_stats_count();
    sws_int_t                  list;
    u_char                    *name;

    sws_admin_json_open(o, NULL, '{');
    sws_admin_json_open(o, "upstreams", '{');
    for (i = 0; i < count; i++) {
        sws_memzero(&us, sizeof(us));
        us.size = sizeof(us);
        if (sws_http_upstream_stats_read(i, &us) != SWS_OK
            || (group.data && sws_str_eq(&group, &us.upstream)))
        {
            continue;
        }
        group = us.upstream;
        list = sws_http_upstream_list_handle(&group);
        if (list <= 0) {
            continue;
        }
        name = sws_pnalloc(pool, group.len + 1);
        if (name == NULL) {
            o->overflow = 1;
            return;
        }
        sws_memcpy(name, group.data, group.len);
        name[group.len] = '\0';
        nconf = sws_admin_configured(&group);
        sws_admin_json_open(o, (char *) name, '[');
        for (k = 0; ; k++) {
            sws_memzero(&ls, sizeof(ls));
            ls.size = sizeof(ls);
            if (sws_http_upstream_list_info(list, k, &ls) != SWS_OK) {
                break;
            }
            sws_admin_json_open(o, NULL, '{');
            sws_admin_json_str(o, "server", ls.addr.data, ls.addr.len);
            sws_admin_json_uint(o, "weight", ls.weight);
            sws_admin_json_cstr(o, "state", ls.state);
            sws_admin_json_bool(o, "added", k >= nconf);
            sws_admin_json_close(o, '}');
        }
        sws_admin_json_close(o, ']');
    }
    sws_admin_json_close(o, '}');
    sws_admin_json_close(o, '}');
    sws_admin_out_bytes(o, "\n", 1);
}

void
sws_admin_state_save(sws_http_request_t *r)
{
    sws_admin_main_conf_t *amcf = sws_http_main_conf(r, &sws_module);
    sws_log_t             *log = sws_http_log(r);
    sws_admin_out_t        o;
    size_t                 size;
    u_char                *buf, tmp[4096 + 32], lock[4096 + 8];
    ssize_t                n;
    int                    fd, lfd;

    if (amcf->state_file.len == 0 || amcf->state_file.len > 4096) {
        return;
    }
    snprintf((char *) tmp, sizeof(tmp), "%s.%d", amcf->state_file.data, (int) getpid());
    snprintf((char *) lock, sizeof(lock), "%s.lock", amcf->state_file.data);
    lfd = open((char *) lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lfd == -1 || flock(lfd, LOCK_EX) == -1) {
        sws_log_error(SWS_LOG_ERR, log, errno, "admin: the state file's lock \"%s\"", lock);
        if (lfd != -1) {
            close(lfd);
        }
        return;
    }
    for (size = 16384; ; size *= 4) {
        buf = sws_pnalloc(sws_http_pool(r), size);
        if (buf == NULL) {
            goto done;
        }
        sws_admin_out_init(&o, buf, size);
        sws_admin_state_write(&o, sws_http_pool(r));
        if (!o.overflow) {
            break;
        }
        if (size > 16 * 1024 * 1024) {
            goto done;
        }
    }
    fd = open((char *) tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd == -1) {
        sws_log_error(SWS_LOG_ERR, log, errno, "admin: open() \"%s\" failed", tmp);
        goto done;
    }
    n = write(fd, o.start, (size_t) (o.pos - o.start));
    if (n != o.pos - o.start || fsync(fd) == -1) {
        sws_log_error(SWS_LOG_ERR, log, errno, "admin: writing \"%s\" failed", tmp);
        close(fd);
        unlink((char *) tmp);
        goto done;
    }
    close(fd);
    if (rename((char *) tmp, (char *) amcf->state_file.data) == -1) {
        sws_log_error(SWS_LOG_ERR, log, errno, "admin: rename() to \"%s\" failed",
                      amcf->state_file.data);
        unlink((char *) tmp);
    }
done:
    close(lfd);                         /* and the lock goes */
}

/* ---- at configuration load, in the master ---- */

static void
sws_admin_state_server(sws_log_t *log, sws_int_t list, const sws_str_t *group, json_t *e)
{
    json_t                    *jserver = json_object_get(e, "server"),
                              *jweight = json_object_get(e, "weight"),
                              *jstate = json_object_get(e, "state"),
                              *jadded = json_object_get(e, "added");
    sws_http_upstream_stats_t  st;
    sws_str_t                  addr;
    sws_uint_t                 i, weight;
    const char                *state;
    int                        found = 0;

    if (!json_is_string(jserver) || !json_is_integer(jweight) || !json_is_string(jstate)
        || json_integer_value(jweight) < 1 || json_integer_value(jweight) > 1000)
    {
        sws_log_error(SWS_LOG_WARN, log, 0, "admin: the state file has an invalid server "
                      "in upstream \"%.*s\": skipped", (int) group->len, group->data);
        return;
    }
    addr.data = (u_char *) json_string_value(jserver);
    addr.len = json_string_length(jserver);
    weight = (sws_uint_t) json_integer_value(jweight);
    state = json_string_value(jstate);
    for (i = 0; !found; i++) {
        sws_memzero(&st, sizeof(st));
        st.size = sizeof(st);
        if (sws_http_upstream_list_info(list, i, &st) != SWS_OK) {
            break;
        }
        found = sws_str_eq(&st.addr, &addr);
    }
    if (!found && !json_is_true(jadded)) {
        sws_log_error(SWS_LOG_WARN, log, 0, "admin: the state file's server %.*s is no longer "
                      "in upstream \"%.*s\": skipped", (int) addr.len, addr.data,
                      (int) group->len, group->data);
        return;
    }
    if (!found || (strcmp(state, "up") == 0 && strcmp(st.state, "up") != 0)) {
        if (sws_http_upstream_list_add(list, &addr, weight) != SWS_OK) {
            sws_log_error(SWS_LOG_WARN, log, 0, "admin: the state file's server %.*s could "
                          "not be added to upstream \"%.*s\"", (int) addr.len, addr.data,
                          (int) group->len, group->data);
            return;
        }
    } else if (st.weight != weight) {
        (void) sws_http_upstream_list_weight(list, &addr, weight);
    }
    if (strcmp(state, "draining") == 0) {
        (void) sws_http_upstream_list_drain(list, &addr);
    } else if (strcmp(state, "down") == 0) {
        (void) sws_http_upstream_list_down(list, &addr);
    }
}

/* The state file's directory, made for the workers (who write the file)
 * when it is not there. */
static void
sws_admin_state_dir(sws_cycle_t *cycle, sws_admin_main_conf_t *amcf)
{
    char       dir[4096];
    char      *slash;
    sws_int_t  uid, gid;

    if (amcf->state_file.len >= sizeof(dir)) {
        return;
    }
    memcpy(dir, amcf->state_file.data, amcf->state_file.len + 1);
    slash = strrchr(dir, '/');
    if (slash == NULL || slash == dir) {
        return;
    }
    *slash = '\0';
    if (mkdir(dir, 0755) == -1) {
        if (errno != EEXIST) {
            sws_log_error(SWS_LOG_ERR, amcf->log, errno, "admin: mkdir(\"%s\") failed", dir);
        }
        return;
    }
    uid = sws_cycle_worker_user(cycle, &gid);
    if (uid != -1 && chown(dir, (uid_t) uid, (gid_t) gid) == -1) {
        sws_log_error(SWS_LOG_ERR, amcf->log, errno, "admin: chown(\"%s\") failed", dir);
    }
}

sws_int_t
sws_admin_state_apply(sws_cycle_t *cycle, sws_admin_main_conf_t *amcf)
{
    sws_log_t    *log = amcf->log;
    json_error_t  err;
    json_t       *root, *ups, *servers, *e;
    const char   *key;
    sws_str_t     group;
    sws_int_t     list;
    size_t        i;

    if (amcf->state_file.len == 0) {
        return SWS_OK;
    }
    sws_admin_state_dir(cycle, amcf);
    root = json_load_file((char *) amcf->state_file.data, JSON_REJECT_DUPLICATES, &err);
    if (root == NULL) {
        if (access((char *) amcf->state_file.data, F_OK) == -1 && errno == ENOENT) {
            return SWS_OK;             /* no change made yet */
        }
        sws_log_error(SWS_LOG_WARN, log, 0, "admin: the state file \"%s\" is not read: %s "
                      "(line %d): the configuration's servers as they are",
                      amcf->state_file.data, err.text, err.line);
        return SWS_OK;
    }
    ups = json_object_get(root, "upstreams");
    json_object_foreach(ups, key, servers) {
        group.data = (u_char *) key;
        group.len = strlen(key);
        list = sws_http_upstream_list_handle(&group);
        if (list <= 0 || !json_is_array(servers)) {
            sws_log_error(SWS_LOG_WARN, log, 0, "admin: the state file's upstream \"%s\" "
                          "is not in the configuration (or takes no changes): skipped", key);
            continue;
        }
        json_array_foreach(servers, i, e) {
            sws_admin_state_server(log, list, &group, e);
        }
    }
    json_decref(root);
    sws_log_error(SWS_LOG_NOTICE, log, 0, "admin: upstream servers set from the state file "
                  "\"%s\"", amcf->state_file.data);
    return SWS_OK;
}
