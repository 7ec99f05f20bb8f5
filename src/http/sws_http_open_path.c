/*
 * Opening a path under disable_symlinks (sws_http_open_path.h): each
 * component from the `from` prefix on is opened with openat(O_NOFOLLOW)
 * relative to the one before, the directories with O_PATH (search
 * permission is all a directory on the way needs, as for open()), so
 * that no symbolic link anywhere below the prefix is followed, and no
 * link can be swapped in between a check and the open (the walk holds
 * each directory open). if_not_owner follows a link only when the link
 * and what it points to have the same owner, as nginx.
 *
 * A disabled link is ELOOP (the handlers answer 403, as nginx); a path
 * component that is a file, not a directory, stays ENOTDIR (404).
 */
#define _GNU_SOURCE 1          /* O_PATH */
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>
#include <sys/stat.h>
#include "sws_http_core.h"
#include "sws_http_open_path.h"

/*
 * The component name of dirfd that is a link or not: NOFOLLOW failed with
 * ELOOP or ENOTDIR. Is it a link, and may it be followed? Returns 0 (it is
 * a link and may be followed), -1 with errno (not allowed: ELOOP; or not a
 * link: errno as it was).
 */
static int
sws_path_link_allowed(int dirfd, const char *name, unsigned mode, int err)
{
    struct stat lst, st;

    if (fstatat(dirfd, name, &lst, AT_SYMLINK_NOFOLLOW) == -1 || !S_ISLNK(lst.st_mode)) {
        errno = err;
        return -1;
    }
    if (mode != SWS_HTTP_SYMLINKS_IF_NOT_OWNER) {
        errno = ELOOP;
        return -1;
    }
    if (fstatat(dirfd, name, &st, 0) == -1) {
        return -1;                           /* dangling: ENOENT */
    }
    if (st.st_uid != lst.st_uid) {
        errno = ELOOP;
        return -1;
    }
    return 0;
}

/*
 * Walk path[0..len) down to its last component: *dirfd is the directory
 * that holds it (the caller closes it), *name its name in buf ("" when the
 * path ends in '/': the directory itself). 0, or -1 with errno.
 */
static int
sws_path_walk(const u_char *path, size_t len, const sws_http_symlinks_t *sl, char *buf,
    int *dirfd, char **name)
{
    size_t  from = sl->from, i;
    char   *p, *s, *last;
    int     fd, nfd, err;

    if (len == 0 || path[0] != '/') {
        errno = ENOENT;
        return -1;
    }
    if (len >= PATH_MAX) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(buf, path, len);
    buf[len] = '\0';

    /* The prefix not checked ends at a '/' at or before `from`: "/srv/www"
     * and "/srv/www/" keep "/srv/www" whole; a from that ends inside a
     * name ("/srv/ww") checks that name. */
    if (from > len) {
        from = 0;
    }
    i = from;
    while (i > 0 && buf[i] != '/') {
        i--;
    }
    if (i == 0) {
        fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    } else {
        buf[i] = '\0';
        fd = open(buf, O_PATH | O_DIRECTORY | O_CLOEXEC);    /* followed */
        buf[i] = '/';
    }
    if (fd == -1) {
        return -1;
    }

    last = strrchr(buf, '/') + 1;
    for (p = buf + i + 1; p < last; p = s + 1) {
        s = strchr(p, '/');
        *s = '\0';
        if (*p == '\0') {
            continue;                          /* "//" */
        }
        nfd = openat(fd, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (nfd == -1 && (errno == ENOTDIR || errno == ELOOP)) {
            if (sws_path_link_allowed(fd, p, sl->mode, errno) == 0) {
                nfd = openat(fd, p, O_PATH | O_DIRECTORY | O_CLOEXEC);
            }
        }
        if (nfd == -1) {
            err = errno;
            close(fd);
            errno = err;
            return -1;
        }
        close(fd);
        fd = nfd;
    }
    *dirfd = fd;
    *name = last;
    return 0;
}

int
sws_http_path_open(const u_char *path, size_t len, const sws_http_symlinks_t *sl, int flags)
{
    char  buf[PATH_MAX], *name;
    int   dirfd, fd, err;

    if (sl->mode == SWS_HTTP_SYMLINKS_OFF) {
        return open((const char *) path, flags);
    }
    if (sws_path_walk(path, len, sl, buf, &dirfd, &name) != 0) {
        return -1;
    }
    if (*name == '\0') {
        fd = openat(dirfd, ".", flags);
    } else {
        fd = openat(dirfd, name, flags | O_NOFOLLOW);
        if (fd == -1 && errno == ELOOP
            && sws_path_link_allowed(dirfd, name, sl->mode, ELOOP) == 0)
        {
            fd = openat(dirfd, name, flags);
        }
    }
    err = errno;
    close(dirfd);
    errno = err;
    return fd;
}

int
sws_http_path_stat(const u_char *path, size_t len, const sws_http_symlinks_t *sl,
    struct stat *st)
{
    char  buf[PATH_MAX], *name;
    int   dirfd, rc, err;

    if (sl->mode == SWS_HTTP_SYMLINKS_OFF) {
        return stat((const char *) path, st);
    }
    if (sws_path_walk(path, len, sl, buf, &dirfd, &name) != 0) {
        return -1;
    }
    if (*name == '\0') {
        rc = fstat(dirfd, st);
    } else {
        rc = fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW);
        if (rc == 0 && S_ISLNK(st->st_mode)) {
            rc = sws_path_link_allowed(dirfd, name, sl->mode, ELOOP);
            if (rc == 0) {
                rc = fstatat(dirfd, name, st, 0);
            }
        }
    }
    err = errno;
    close(dirfd);
    errno = err;
    return rc;
}

void
sws_http_symlinks(sws_http_request_t *r, const sws_str_t *path, sws_http_symlinks_t *sl)
{
    sws_http_core_loc_conf_t *clcf = sws_http_core_loc(r);
    const sws_str_t          *from;

    sl->mode = clcf->disable_symlinks;
    sl->from = 0;
    if (sl->mode == SWS_HTTP_SYMLINKS_OFF) {
        return;
    }
    from = clcf->disable_symlinks_root ? &clcf->root : &clcf->disable_symlinks_from;
    /* A path outside the prefix is checked whole, as nginx. */
    if (from->len && from->len <= path->len
        && memcmp(from->data, path->data, from->len) == 0)
    {
        sl->from = from->len;
    }
}
