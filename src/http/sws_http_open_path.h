/*
 * disable_symlinks: open or stat a path without following symbolic links
 * below a prefix (sws_http_open_path.c). Used by sws_http_open_file,
 * sws_http_file_info and the open file cache.
 */
#ifndef SWS_HTTP_OPEN_PATH_H
#define SWS_HTTP_OPEN_PATH_H

#include <sys/stat.h>
#include <scalws/scalws.h>

#define SWS_HTTP_SYMLINKS_OFF           0    /* followed (nginx's default) */
#define SWS_HTTP_SYMLINKS_ON            1    /* none below the prefix */
#define SWS_HTTP_SYMLINKS_IF_NOT_OWNER  2    /* only to what the link's owner owns */

typedef struct {
    unsigned  mode;
    size_t    from;         /* bytes of the path not checked */
} sws_http_symlinks_t;

/* The location's rule for this path (from= applied). */
void sws_http_symlinks(sws_http_request_t *r, const sws_str_t *path, sws_http_symlinks_t *sl);
/* open(2) and stat(2) under the rule: -1 with errno, ELOOP for a link not
 * allowed. path is NUL-terminated, len its length. */
int  sws_http_path_open(const u_char *path, size_t len, const sws_http_symlinks_t *sl,
    int flags);
int  sws_http_path_stat(const u_char *path, size_t len, const sws_http_symlinks_t *sl,
    struct stat *st);

#endif
