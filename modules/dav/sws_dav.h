/*
 * The dav module's shared parts: its configuration, the file operations
 * (sws_dav_fs.c) and COPY/MOVE (sws_dav_copy.c).
 */
#ifndef SWS_DAV_H
#define SWS_DAV_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <scalws/scalws.h>

/* dav_methods bits */
#define SWS_DAV_PUT     0x01
#define SWS_DAV_DELETE  0x02
#define SWS_DAV_MKCOL   0x04
#define SWS_DAV_COPY    0x08
#define SWS_DAV_MOVE    0x10

typedef struct {
    sws_int_t   methods;                /* SWS_DAV_* bits; 0: off */
    sws_int_t   access;                 /* mode of created files (dav_access) */
    sws_int_t   create_full_put_path;
    sws_int_t   min_delete_depth;
} sws_dav_loc_conf_t;

extern sws_module_t  sws_module;

/* A directory's mode for a file mode: x wherever r is (nginx's). */
#define sws_dav_dir_access(a)  ((mode_t) ((a) | (((a) & 0444) >> 2)))

/* sws_dav_module.c */
sws_int_t sws_dav_error(sws_http_request_t *r, int err, sws_int_t not_found,
    const char *op, const u_char *path);
sws_int_t sws_dav_depth(sws_http_request_t *r, sws_int_t dflt);
sws_int_t sws_dav_has_body(sws_http_request_t *r);
sws_int_t sws_dav_symlinks_allowed(sws_http_request_t *r, const u_char *path, size_t len);
sws_int_t sws_dav_respond(sws_http_request_t *r, sws_uint_t status, const sws_str_t *location);

#define SWS_DAV_INFINITY  -1
#define SWS_DAV_INVALID   -2

/* sws_dav_copy.c */
sws_int_t sws_dav_copy_move(sws_http_request_t *r, int move);

/* sws_dav_fs.c: 0, or -1 with errno (and the failure logged) */
int sws_dav_remove_tree(sws_log_t *log, const u_char *path);
int sws_dav_copy_file(sws_log_t *log, const u_char *from, const u_char *to,
    const struct stat *st);
int sws_dav_copy_tree(sws_log_t *log, const u_char *from, const u_char *to);
int sws_dav_create_path(const u_char *path, size_t len, mode_t mode);
/* A temporary file next to path (in its directory): fd, name in tmp. */
int sws_dav_temp_file(sws_pool_t *pool, const u_char *path, size_t len, sws_str_t *tmp);

#endif
