/*
 * Temporary files under a configured directory (client_body_temp_path):
 * the directory and its levels, creating a file with a fresh name, writing
 * to it, and closing (and maybe removing) it when its pool goes.
 */
#ifndef SWS_HTTP_TEMP_FILE_H
#define SWS_HTTP_TEMP_FILE_H

#include <sys/types.h>
#include <scalws/scalws.h>

#define SWS_HTTP_TEMP_LEVELS  3

/* DIR [level1 [level2 [level3]]]: each level is a subdirectory named by
 * 1 or 2 digits of the file name, taken from its end (like nginx). */
typedef struct {
    sws_str_t   name;                     /* absolute, NUL-terminated, no trailing '/' */
    size_t      level[SWS_HTTP_TEMP_LEVELS];
    size_t      sublen;                   /* length of "l1/l2/l3/" in file names */
} sws_http_temp_path_t;

/* What becomes of the file's name. */
#define SWS_HTTP_TEMP_UNLINK  0           /* removed at once: only the fd knows it */
#define SWS_HTTP_TEMP_KEEP    1           /* stays after the request */
#define SWS_HTTP_TEMP_CLEAN   2           /* removed when the pool goes */

typedef struct {
    int         fd;
    off_t       offset;                   /* bytes written so far */
    char       *name;                     /* for logs and unlink */
    sws_log_t  *log;
    unsigned    linked:1;                 /* the name still exists */
    unsigned    clean:1;                  /* remove the name at cleanup */
} sws_http_temp_file_t;

/* Parse the arguments of a "*_temp_path DIR [l1 [l2 [l3]]]" directive
 * (the directive's args 1..n) into path; NULL (SWS_CONF_OK) or a message. */
char *sws_http_temp_path_parse(sws_conf_t *cf, sws_http_temp_path_t *path);

/* Have the master create path with the others (sws_http_body_file_module.c);
 * one name with two sets of levels is an error. From a merge or
 * postconfiguration inside http { }. */
sws_int_t sws_http_temp_path_register(sws_conf_t *cf, sws_http_temp_path_t *path);

/* Create the directory if missing, owned by uid when uid is not -1 (the
 * master does this before starting workers that drop privileges). */
sws_int_t sws_http_temp_path_create(const sws_http_temp_path_t *path, uid_t uid,
    sws_log_t *log);

/* A new file (O_CLOEXEC, mode 0600) in path, closed (and removed if asked)
 * by a pool cleanup. NULL after logging the path and errno at crit. */
sws_http_temp_file_t *sws_http_temp_file_open(sws_pool_t *pool, sws_log_t *log,
    const sws_http_temp_path_t *path, sws_uint_t mode);

/* Append n bytes (a blocking write, as nginx does without aio). SWS_OK, or
 * SWS_ERROR after logging the file name and errno. */
sws_int_t sws_http_temp_file_write(sws_http_temp_file_t *tf, const u_char *p, size_t n);

#endif
