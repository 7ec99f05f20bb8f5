/*
 * Password files, kept per worker: read and indexed by user the first time
 * a request needs one, then stat()ed at most once a second; a change of
 * device, inode, size or modification time (to the nanosecond) reads it
 * again. So an unchanged file costs a hash lookup per request instead of a
 * read (nginx reads the file on every request), and an edited or replaced
 * one (htpasswd writes a new file and renames it) is seen within a second.
 *
 * Each version lives in a pool of its own, dropped when the next one is
 * read. The list is the worker's (a worker is single-threaded), shared by
 * every location that names the same file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sws_auth_basic.h"

#define SWS_AUTH_BASIC_FILE_MAX    (64 << 20)   /* refuse larger files */
#define SWS_AUTH_BASIC_RECHECK_MS  1000
/* Paths made of variables could name any number of files: keep the most
 * recently added ones only. */
#define SWS_AUTH_BASIC_FILES_MAX   64

struct sws_auth_basic_file_s {
    sws_auth_basic_file_t  *next;
    char                   *path;      /* malloc'ed, NUL-terminated */
    size_t                  path_len;
    dev_t                   dev;
    ino_t                   ino;
    off_t                   size;
    struct timespec         mtime;
    sws_msec_t              checked;   /* when last stat()ed */
    sws_pool_t             *pool;      /* the users of this version */
    sws_hash_t             *users;     /* user -> sws_str_t * (hash) */
    int                     err;       /* errno of the last failed read, 0 */
};

static sws_auth_basic_file_t  *sws_auth_basic_files;
static sws_uint_t              sws_auth_basic_nfiles;

static void
sws_auth_basic_file_free(sws_auth_basic_file_t *f)
{
    if (f->pool) {
        sws_pool_destroy(f->pool);
    }
    free(f->path);
    free(f);
}

/* Drop the oldest entry when the list is full. */
static void
sws_auth_basic_files_trim(void)
{
    sws_auth_basic_file_t  **fp;

    if (sws_auth_basic_nfiles < SWS_AUTH_BASIC_FILES_MAX) {
        return;
    }
    for (fp = &sws_auth_basic_files; (*fp)->next; fp = &(*fp)->next) {
        /* to the last */
    }
    sws_auth_basic_file_free(*fp);
    *fp = NULL;
    sws_auth_basic_nfiles--;
}

static int
sws_auth_basic_same_file(const sws_auth_basic_file_t *f, const struct stat *st)
{
    return f->dev == st->st_dev && f->ino == st->st_ino && f->size == st->st_size
           && f->mtime.tv_sec == st->st_mtim.tv_sec && f->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* Read the whole file into pool memory and index its lines. */
static sws_int_t
sws_auth_basic_file_read(sws_auth_basic_file_t *f, sws_log_t *log)
{
    struct stat    st;
    sws_pool_t    *pool;
    sws_hash_t    *users;
    sws_str_t      line, user, hash, *value;
    const u_char  *pos, *end;
    u_char        *data;
    ssize_t        n;
    size_t         got = 0;
    int            fd, err;

    fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd == -1) {
        return SWS_ERROR;
    }
    if (fstat(fd, &st) == -1) {
        goto failed;
    }
    if (!S_ISREG(st.st_mode) || st.st_size > SWS_AUTH_BASIC_FILE_MAX) {
        errno = S_ISREG(st.st_mode) ? EFBIG : EINVAL;
        goto failed;
    }
    pool = sws_pool_create(4096, log);
    if (pool == NULL) {
        errno = ENOMEM;
        goto failed;
    }
    data = sws_pnalloc(pool, (size_t) st.st_size + 1);
    users = sws_hash_create(pool, (sws_uint_t) (st.st_size / 32) + 1, 0);
    if (data == NULL || users == NULL) {
        errno = ENOMEM;
        goto failed_pool;
    }
    while (got < (size_t) st.st_size) {
        n = read(fd, data + got, (size_t) st.st_size - got);
        if (n == -1 && errno == EINTR) {
            continue;
        }
        if (n == -1) {
            goto failed_pool;
        }
        if (n == 0) {
            break;                      /* shorter now: what is there */
        }
        got += (size_t) n;
    }
    close(fd);

    pos = data;
    end = data + got;
    while (sws_auth_basic_next_line(&pos, end, &line)) {
        if (sws_auth_basic_parse_line(&line, &user, &hash) != SWS_OK) {
            continue;
        }
        value = sws_palloc(pool, sizeof(sws_str_t));
        if (value == NULL) {
            errno = ENOMEM;
            sws_pool_destroy(pool);
            return SWS_ERROR;
        }
        *value = hash;
        /* a user named twice: the first line counts, as in nginx */
        if (sws_hash_add(users, &user, value) == SWS_ERROR) {
            errno = ENOMEM;
            sws_pool_destroy(pool);
            return SWS_ERROR;
        }
    }

    if (f->pool) {
        sws_pool_destroy(f->pool);
    }
    f->pool = pool;
    f->users = users;
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    f->size = st.st_size;
    f->mtime = st.st_mtim;
    f->err = 0;
    return SWS_OK;

failed_pool:
    err = errno;
    sws_pool_destroy(pool);
    errno = err;
failed:
    err = errno;
    close(fd);
    errno = err;
    return SWS_ERROR;
}

sws_int_t
sws_auth_basic_file_get(const sws_str_t *path, sws_log_t *log, sws_auth_basic_file_t **file)
{
    sws_auth_basic_file_t  *f;
    struct stat             st;
    sws_msec_t              now = sws_current_msec();

    for (f = sws_auth_basic_files; f; f = f->next) {
        if (f->path_len == path->len && memcmp(f->path, path->data, path->len) == 0) {
            break;
        }
    }
    if (f == NULL) {
        sws_auth_basic_files_trim();
        f = sws_calloc(sizeof(sws_auth_basic_file_t), log);
        if (f == NULL) {
            errno = ENOMEM;
            return SWS_ERROR;
        }
        f->path = sws_alloc(path->len + 1, log);
        if (f->path == NULL) {
            free(f);
            errno = ENOMEM;
            return SWS_ERROR;
        }
        memcpy(f->path, path->data, path->len);
        f->path[path->len] = '\0';
        f->path_len = path->len;
        f->next = sws_auth_basic_files;
        sws_auth_basic_files = f;
        sws_auth_basic_nfiles++;
    } else if (now - f->checked < SWS_AUTH_BASIC_RECHECK_MS) {
        /* looked at less than a second ago */
        if (f->users == NULL) {
            errno = f->err;
            return SWS_ERROR;
        }
        *file = f;
        return SWS_OK;
    }

    f->checked = now;
    if (f->users != NULL && stat(f->path, &st) == 0 && sws_auth_basic_same_file(f, &st)) {
        *file = f;
        return SWS_OK;
    }
    if (sws_auth_basic_file_read(f, log) != SWS_OK) {
        /* gone or unreadable now: refuse until it is back, not the old users */
        f->err = errno;
        if (f->pool) {
            sws_pool_destroy(f->pool);
            f->pool = NULL;
            f->users = NULL;
        }
        errno = f->err;
        return SWS_ERROR;
    }
    *file = f;
    return SWS_OK;
}

const sws_str_t *
sws_auth_basic_file_find(sws_auth_basic_file_t *file, const sws_str_t *user)
{
    return sws_hash_find(file->users, user->data, user->len);
}

void
sws_auth_basic_files_free(void)
{
    sws_auth_basic_file_t  *f, *next;

    for (f = sws_auth_basic_files; f; f = next) {
        next = f->next;
        sws_auth_basic_file_free(f);
    }
    sws_auth_basic_files = NULL;
    sws_auth_basic_nfiles = 0;
}
