/*
 * The random_index module: nginx's random_index. A URI ending in '/' is
 * answered with one of the directory's files, chosen at random for each
 * request: an internal redirect to the URI plus the file's name (the
 * query kept), which then goes through the locations as any request.
 *
 *   random_index on|off;           location (off)
 *
 * As nginx 1.22's ngx_http_random_index_module: GET, HEAD and POST only;
 * names starting with '.' are never chosen, nor anything that is not a
 * regular file (a directory; a symbolic link counts as what it points
 * to, as nginx stats each entry); a directory without such a file is declined (the
 * index handler, autoindex or the core's 403 answer it); a directory that
 * is not there is 404, one that may not be read 403. It runs before the
 * static module's index handler.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include <scalws/scalws.h>

typedef struct {
    sws_int_t  enable;
} sws_random_index_loc_conf_t;

static void *sws_random_index_create_loc_conf(sws_conf_t *cf);
static char *sws_random_index_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_random_index_init(sws_conf_t *cf);
static sws_int_t sws_random_index_init_worker(sws_cycle_t *cycle);

static const sws_command_t sws_random_index_commands[] = {
    { "random_index", SWS_HTTP_LOC_CONF | SWS_CONF_FLAG, sws_conf_set_flag_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_random_index_loc_conf_t, enable), NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "random_index",
    .commands = sws_random_index_commands,
    .create_loc_conf = sws_random_index_create_loc_conf,
    .merge_loc_conf = sws_random_index_merge_loc_conf,
    .postconfiguration = sws_random_index_init,
    .init_worker = sws_random_index_init_worker,
};


/* Is the entry a regular file, or a link to one (followed, as nginx
 * does: its stat of each entry)? 1, 0, or -1 with errno. */
static int
sws_random_index_is_file(DIR *d, const struct dirent *de)
{
    struct stat  st;

    if (de->d_type == DT_REG) {
        return 1;
    }
    if (de->d_type != DT_LNK && de->d_type != DT_UNKNOWN) {
        return 0;
    }
    if (fstatat(dirfd(d), de->d_name, &st, 0) == -1) {
        return errno == ENOENT ? 0 : -1;        /* a dangling link: skipped */
    }
    return S_ISREG(st.st_mode);
}


/* The names of the files of d that may be chosen. */
static sws_int_t
sws_random_index_read(sws_http_request_t *r, DIR *d, const sws_str_t *path, sws_array_t *names)
{
    struct dirent  *de;
    sws_str_t      *name;

    for ( ;; ) {
        errno = 0;
        de = readdir(d);
        if (de == NULL) {
            if (errno != 0) {
                sws_log_error(SWS_LOG_CRIT, sws_http_log(r), errno, "readdir() \"%s\" failed",
                              path->data);
                return SWS_ERROR;
            }
            return SWS_OK;
        }
        if (de->d_name[0] == '.') {
            continue;
        }
        switch (sws_random_index_is_file(d, de)) {
        case 0:
            continue;
        case -1:
            sws_log_error(SWS_LOG_CRIT, sws_http_log(r), errno, "stat() \"%s/%s\" failed",
                          path->data, de->d_name);
            return SWS_ERROR;
        }
        name = sws_array_push(names);
        if (name == NULL) {
            return SWS_ERROR;
        }
        name->len = strlen(de->d_name);
        name->data = sws_pnalloc(sws_http_pool(r), name->len);
        if (name->data == NULL) {
            return SWS_ERROR;
        }
        memcpy(name->data, de->d_name, name->len);
    }
}


static sws_int_t
sws_random_index_handler(sws_http_request_t *r)
{
    const sws_str_t  *uri = sws_http_uri(r);
    sws_str_t         path, new_uri, *name;
    sws_array_t      *names;
    size_t            root_len;
    sws_int_t         rc;
    sws_uint_t        n;
    DIR              *d;
    int               fd, err;

    if (uri->len == 0 || uri->data[uri->len - 1] != '/'
        || !(sws_http_method(r) & (SWS_HTTP_GET | SWS_HTTP_HEAD | SWS_HTTP_POST)))
    {
        return SWS_DECLINED;
    }
    if (sws_http_map_uri_to_path(r, &path, &root_len, 0) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (path.len > 1 && path.data[path.len - 1] == '/') {
        path.data[--path.len] = '\0';
    }

    fd = open((char *) path.data, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    d = fd == -1 ? NULL : fdopendir(fd);
    if (d == NULL) {
        err = errno;
        if (fd != -1) {
            close(fd);
        }
        if (err == ENOENT || err == ENOTDIR || err == ENAMETOOLONG) {
            sws_log_error(SWS_LOG_ERR, sws_http_log(r), err, "opendir() \"%s\" failed",
                          path.data);
            return SWS_HTTP_NOT_FOUND;
        }
        sws_log_error(err == EACCES ? SWS_LOG_ERR : SWS_LOG_CRIT, sws_http_log(r), err,
                      "opendir() \"%s\" failed", path.data);
        return err == EACCES ? SWS_HTTP_FORBIDDEN : SWS_HTTP_INTERNAL_SERVER_ERROR;
    }

    names = sws_array_create(sws_http_pool(r), 16, sizeof(sws_str_t));
    rc = names ? sws_random_index_read(r, d, &path, names) : SWS_ERROR;
    closedir(d);
    if (rc != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (names->nelts == 0) {
        return SWS_DECLINED;
    }

    n = (sws_uint_t) (((uint64_t) random() * names->nelts) / ((uint64_t) RAND_MAX + 1));
    name = (sws_str_t *) names->elts + n;

    new_uri.len = uri->len + name->len;
    new_uri.data = sws_pnalloc(sws_http_pool(r), new_uri.len);
    if (new_uri.data == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    memcpy(new_uri.data, uri->data, uri->len);
    memcpy(new_uri.data + uri->len, name->data, name->len);

    return sws_http_internal_redirect(r, &new_uri, sws_http_args(r));
}


/* ---- configuration ---- */

static void *
sws_random_index_create_loc_conf(sws_conf_t *cf)
{
    sws_random_index_loc_conf_t  *rlcf;

    rlcf = sws_palloc(sws_conf_pool(cf), sizeof(sws_random_index_loc_conf_t));
    if (rlcf) {
        rlcf->enable = SWS_UNSET;
    }
    return rlcf;
}

static char *
sws_random_index_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_random_index_loc_conf_t  *prev = parent, *conf = child;

    (void) cf;
    sws_conf_merge_value(conf->enable, prev->enable, 0);
    return SWS_CONF_OK;
}

static sws_uint_t
sws_random_index_active(const void *conf)
{
    const sws_random_index_loc_conf_t  *rlcf = conf;

    return rlcf->enable == 1;
}

/* Before the static module's index handler. */
static sws_int_t
sws_random_index_init(sws_conf_t *cf)
{
    static const sws_http_phase_handler_t  handler = {
        .phase = SWS_HTTP_CONTENT_PHASE, .order = SWS_HTTP_ORDER_INDEX - 50,
        .handler = sws_random_index_handler, .module = &sws_module,
        .active = sws_random_index_active
    };

    return sws_http_register_phase_handler(cf, &handler);
}

/* Each worker its own sequence. */
static sws_int_t
sws_random_index_init_worker(sws_cycle_t *cycle)
{
    (void) cycle;
    srandom((unsigned) getpid() ^ (unsigned) sws_current_msec());
    return SWS_OK;
}
