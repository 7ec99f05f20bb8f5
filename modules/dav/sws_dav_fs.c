/*
 * The dav module's file operations: temporary files next to their target,
 * whole trees removed and copied. Trees are walked through directory
 * descriptors (openat with O_NOFOLLOW): a symbolic link inside a tree is
 * removed as a link, never followed, and a copy leaves links and special
 * files out, so that neither leaves the tree it was given.
 */
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/time.h>
#include "sws_dav.h"

#define SWS_DAV_COPY_BUF  65536


int
sws_dav_temp_file(sws_pool_t *pool, const u_char *path, size_t len, sws_str_t *tmp)
{
    static const char  suffix[] = ".dav-XXXXXX";
    const u_char      *slash;
    u_char            *p;
    size_t             dir;
    int                fd;

    slash = path + len;
    while (slash > path && slash[-1] != '/') {
        slash--;
    }
    dir = (size_t) (slash - path);
    /* "dir/.NAME.dav-XXXXXX": hidden, and never a name a client could PUT
     * at the same time as its own (mkstemp picks a free one) */
    tmp->data = sws_pnalloc(pool, len + 1 + sizeof(suffix));
    if (tmp->data == NULL) {
        errno = ENOMEM;
        return -1;
    }
    p = sws_cpymem(tmp->data, path, dir);
    *p++ = '.';
    p = sws_cpymem(p, slash, len - dir);
    p = sws_cpymem(p, suffix, sizeof(suffix));
    tmp->len = (size_t) (p - tmp->data) - 1;
    fd = mkstemp((char *) tmp->data);
    return fd;
}


/* mkdir -p of path's directories (not its last segment). */
int
sws_dav_create_path(const u_char *path, size_t len, mode_t mode)
{
    char    buf[4096];
    size_t  i;

    if (len >= sizeof(buf)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(buf, path, len);
    buf[len] = '\0';
    for (i = 1; i < len; i++) {
        if (buf[i] != '/') {
            continue;
        }
        buf[i] = '\0';
        if (mkdir(buf, mode) == -1 && errno != EEXIST) {
            return -1;
        }
        buf[i] = '/';
    }
    return 0;
}


/* ---- removing a tree ------------------------------------------------- */

static int
sws_dav_remove_at(sws_log_t *log, int dfd, const char *name, int depth)
{
    DIR            *d;
    struct dirent  *de;
    int             fd, rc = 0;

    if (unlinkat(dfd, name, 0) == 0) {
        return 0;
    }
    if (errno != EISDIR && errno != EPERM) {
        sws_log_error(SWS_LOG_CRIT, log, errno, "unlink() \"%s\" failed", name);
        return -1;
    }
    if (depth > 64) {
        errno = ELOOP;
        return -1;
    }
    fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd == -1) {
        sws_log_error(SWS_LOG_CRIT, log, errno, "open() \"%s\" failed", name);
        return -1;
    }
    d = fdopendir(fd);
    if (d == NULL) {
        close(fd);
        return -1;
    }
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.'
            && (de->d_name[1] == '\0' || (de->d_name[1] == '.' && de->d_name[2] == '\0')))
        {
            continue;
        }
        if (sws_dav_remove_at(log, dirfd(d), de->d_name, depth + 1) != 0) {
            rc = -1;
        }
    }
    closedir(d);
    if (rc == 0 && unlinkat(dfd, name, AT_REMOVEDIR) != 0) {
        sws_log_error(SWS_LOG_CRIT, log, errno, "rmdir() \"%s\" failed", name);
        rc = -1;
    }
    return rc;
}

int
sws_dav_remove_tree(sws_log_t *log, const u_char *path)
{
    return sws_dav_remove_at(log, AT_FDCWD, (const char *) path, 0);
}


/* ---- copying --------------------------------------------------------- */

/* A copy gets its source's mode less the umask, as nginx's (it creates
 * the file with that mode); ours is made by mkstemp, so it is set after. */
static mode_t
sws_dav_umask(void)
{
    mode_t  m = umask(0);

    (void) umask(m);
    return m;
}

static int
sws_dav_copy_fd(int in, int out)
{
    u_char   buf[SWS_DAV_COPY_BUF];
    ssize_t  n, w, off;

    for ( ;; ) {
        n = read(in, buf, sizeof(buf));
        if (n == 0) {
            return 0;
        }
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        for (off = 0; off < n; off += w) {
            w = write(out, buf + off, (size_t) (n - off));
            if (w < 0) {
                if (errno == EINTR) {
                    w = 0;
                    continue;
                }
                return -1;
            }
        }
    }
}

/* from (opened in dfrom, followed only if follow) to a new file "to" in dto, with
 * from's mode and mtime. */
static int
sws_dav_copy_file_at(sws_log_t *log, int dfrom, const char *from, int dto, const char *to,
    const struct stat *st, int follow)
{
    struct timespec  ts[2];
    int              in, out, rc;

    in = openat(dfrom, from, O_RDONLY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
    if (in == -1) {
        sws_log_error(SWS_LOG_CRIT, log, errno, "open() \"%s\" failed", from);
        return -1;
    }
    out = openat(dto, to, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                 st->st_mode & 07777);
    if (out == -1) {
        sws_log_error(SWS_LOG_CRIT, log, errno, "open() \"%s\" failed", to);
        close(in);
        return -1;
    }
    rc = sws_dav_copy_fd(in, out);
    if (rc != 0) {
        sws_log_error(SWS_LOG_CRIT, log, errno, "copying \"%s\" to \"%s\" failed", from, to);
    } else {
        ts[0].tv_sec = st->st_mtime;
        ts[0].tv_nsec = 0;
        ts[1] = ts[0];
        (void) fchmod(out, st->st_mode & 07777 & ~sws_dav_umask());
        (void) futimens(out, ts);
    }
    close(in);
    if (close(out) != 0 && rc == 0) {
        sws_log_error(SWS_LOG_CRIT, log, errno, "close() \"%s\" failed", to);
        rc = -1;
    }
    return rc;
}

int
sws_dav_copy_file(sws_log_t *log, const u_char *from, const u_char *to, const struct stat *st)
{
    return sws_dav_copy_file_at(log, AT_FDCWD, (const char *) from, AT_FDCWD,
                                (const char *) to, st, 1);
}

/* The entries of directory fd "from" into directory fd "to" (made). */
static int
sws_dav_copy_dir_at(sws_log_t *log, int from, int to, int depth)
{
    DIR            *d;
    struct dirent  *de;
    struct stat     st;
    int             sub_from, sub_to, fd, rc = 0;

    if (depth > 64) {
        errno = ELOOP;
        return -1;
    }
    fd = dup(from);
    if (fd == -1) {
        return -1;
    }
    d = fdopendir(fd);
    if (d == NULL) {
        close(fd);
        return -1;
    }
    while (rc == 0 && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.'
            && (de->d_name[1] == '\0' || (de->d_name[1] == '.' && de->d_name[2] == '\0')))
        {
            continue;
        }
        if (fstatat(from, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            rc = -1;
        } else if (S_ISREG(st.st_mode)) {
            rc = sws_dav_copy_file_at(log, from, de->d_name, to, de->d_name, &st, 0);
        } else if (S_ISDIR(st.st_mode)) {
            if (mkdirat(to, de->d_name, st.st_mode & 07777) != 0) {
                sws_log_error(SWS_LOG_CRIT, log, errno, "mkdir() \"%s\" failed", de->d_name);
                rc = -1;
                break;
            }
            sub_from = openat(from, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            sub_to = openat(to, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub_from == -1 || sub_to == -1) {
                rc = -1;
            } else {
                rc = sws_dav_copy_dir_at(log, sub_from, sub_to, depth + 1);
            }
            if (sub_from != -1) {
                close(sub_from);
            }
            if (sub_to != -1) {
                struct timespec ts[2];
                ts[0].tv_sec = st.st_mtime;
                ts[0].tv_nsec = 0;
                ts[1] = ts[0];
                (void) futimens(sub_to, ts);
                close(sub_to);
            }
        }
        /* symbolic links and special files are left out */
    }
    closedir(d);
    return rc;
}

/* The tree under directory "from" into the directory "to" (made already). */
int
sws_dav_copy_tree(sws_log_t *log, const u_char *from, const u_char *to)
{
    int  f, t, rc;

    f = open((const char *) from, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (f == -1) {
        sws_log_error(SWS_LOG_CRIT, log, errno, "open() \"%s\" failed", from);
        return -1;
    }
    t = open((const char *) to, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (t == -1) {
        sws_log_error(SWS_LOG_CRIT, log, errno, "open() \"%s\" failed", to);
        close(f);
        return -1;
    }
    rc = sws_dav_copy_dir_at(log, f, t, 0);
    close(f);
    close(t);
    return rc;
}
