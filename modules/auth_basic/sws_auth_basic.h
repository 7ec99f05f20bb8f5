/*
 * The auth_basic module: nginx's HTTP Basic authentication against
 * htpasswd files. The directives and the access check are in
 * sws_auth_basic_module.c; the parser of password file lines in
 * sws_auth_basic_parse.c (the Authorization field and base64 are the
 * core's: sws_http_parse_basic_credentials, sws_decode_base64), which
 * depends on nothing else (the fuzz target links it alone); the password
 * schemes in sws_auth_basic_crypt.c; the per-worker cache of password
 * files, re-read when they change, in sws_auth_basic_file.c.
 */
#ifndef SWS_AUTH_BASIC_H
#define SWS_AUTH_BASIC_H

#include <scalws/scalws.h>

/* Longest user:password we decode (the field's base64 is at most 4/3 of
 * it): longer credentials are refused as malformed. */
#define SWS_AUTH_BASIC_MAX_CREDENTIALS  SWS_HTTP_MAX_CREDENTIALS

/* ---- sws_auth_basic_parse.c ---- */

/*
 * Split the next line off [*pos, end) (LF or CRLF ends it); *pos moves past
 * it. Returns 0 at the end, else 1 with line set.
 */
int       sws_auth_basic_next_line(const u_char **pos, const u_char *end, sws_str_t *line);
/*
 * A password file line, as nginx reads one: "user:hash[:anything]".
 * Blank lines and lines starting with '#' are skipped, and so are lines
 * without ':' or with an empty user. SWS_OK with user and hash (pointing
 * into line), or SWS_DECLINED.
 */
sws_int_t sws_auth_basic_parse_line(const sws_str_t *line, sws_str_t *user, sws_str_t *hash);

/* ---- sws_auth_basic_crypt.c ---- */

/*
 * Does password match hash (a password file's second field)? Schemes:
 * $apr1$ (Apache's MD5), {SHA}, {SSHA}, {PLAIN}, and whatever libcrypt's
 * crypt knows ($2y$/$2b$ bcrypt, $5$/$6$ SHA-crypt, $1$ MD5-crypt,
 * DES). The results are compared in constant time. 1: yes, 0: no, -1: the
 * hash is not one of those (logged).
 */
int       sws_auth_basic_verify(const sws_str_t *password, const sws_str_t *hash,
    sws_log_t *log);
/* The $apr1$ hash of password with the salt of setting ("$apr1$SALT[$...]")
 * into out (room for 6 + 8 + 1 + 22 + 1 bytes, NUL-terminated); returns its
 * length, or -1 for a setting that is not $apr1$. */
ssize_t   sws_auth_basic_apr1(const sws_str_t *password, const sws_str_t *setting,
    u_char *out);

/* ---- sws_auth_basic_file.c ---- */

typedef struct sws_auth_basic_file_s  sws_auth_basic_file_t;

/*
 * The password file at path (NUL-terminated), read and indexed by user
 * once, then looked at again (stat: device, inode, size, mtime) at most
 * once a second and read anew when it changed. SWS_OK with *file, or
 * SWS_ERROR with errno set (the file cannot be opened or read).
 */
sws_int_t sws_auth_basic_file_get(const sws_str_t *path, sws_log_t *log,
    sws_auth_basic_file_t **file);
/* The hash for user, or NULL. */
const sws_str_t *sws_auth_basic_file_find(sws_auth_basic_file_t *file, const sws_str_t *user);
/* Forget every file (worker exit). */
void      sws_auth_basic_files_free(void);

#endif
