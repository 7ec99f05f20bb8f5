/* String helpers. */
#ifndef SWS_STRING_H
#define SWS_STRING_H

#include <string.h>
#include <scalws/sws_types.h>

#define sws_tolower(c)  (u_char) ((c >= 'A' && c <= 'Z') ? (c | 0x20) : c)
#define sws_toupper(c)  (u_char) ((c >= 'a' && c <= 'z') ? (c & ~0x20) : c)

#define sws_memcpy(d, s, n)  (void) memcpy(d, s, n)
#define sws_cpymem(d, s, n)  (((u_char *) memcpy(d, s, n)) + (n))
#define sws_memzero(p, n)    (void) memset(p, 0, n)

void       sws_strlow(u_char *dst, const u_char *src, size_t n);
sws_int_t  sws_strncasecmp(const u_char *s1, const u_char *s2, size_t n);
sws_int_t  sws_strcasecmp(const u_char *s1, const u_char *s2);
/* 1 if a and b are equal, byte for byte / ignoring ASCII case. */
int        sws_str_eq(const sws_str_t *a, const sws_str_t *b);
int        sws_str_caseeq(const sws_str_t *a, const sws_str_t *b);
int        sws_str_eq_cstr(const sws_str_t *a, const char *b);
int        sws_str_caseeq_cstr(const sws_str_t *a, const char *b);
u_char    *sws_strlcasestrn(u_char *s1, u_char *last, const u_char *s2, size_t n);

/* Copy into the pool; the copy is NUL-terminated (len excludes the NUL). */
u_char    *sws_pstrdup(sws_pool_t *pool, const sws_str_t *src);
char      *sws_pstrdup_cstr(sws_pool_t *pool, const sws_str_t *src);
sws_int_t  sws_str_from_cstr(sws_pool_t *pool, sws_str_t *dst, const char *src);

/* Decimal parsing: SWS_ERROR on anything but digits or on overflow. */
sws_int_t  sws_atoi(const u_char *line, size_t n);
off_t      sws_atoof(const u_char *line, size_t n);
sws_int_t  sws_hextoi(const u_char *line, size_t n);

/* Sizes "10", "10k", "10m", "1g" -> bytes; SWS_ERROR if invalid. */
ssize_t    sws_parse_size(const sws_str_t *line);
/* Times "500ms", "10s", "5m", "1h", "1d", "1h 30m", plain = seconds -> ms. */
sws_msec_t sws_parse_time_ms(const sws_str_t *line);

/* snprintf-like into [buf, last): returns the end of what was written. Uses
 * the C library's format (vsnprintf); truncates at last. */
u_char    *sws_slprintf(u_char *buf, u_char *last, const char *fmt, ...) SWS_PRINTF(3, 4);
u_char    *sws_vslprintf(u_char *buf, u_char *last, const char *fmt, va_list args);
/* Unsigned decimal into buf (no NUL), returns end. buf needs 20 bytes. */
u_char    *sws_sprint_uint(u_char *buf, uint64_t n);
/* Hex encode len bytes of src into dst (2*len bytes), lower case. */
u_char    *sws_hex_dump(u_char *dst, const u_char *src, size_t len);

/* Percent-escaping (RFC 3986 2.1, upper-case hex) of what goes into a URI.
 * PATH: a decoded path put back into a request line or a Location: the
 * controls, space, non-ASCII, DEL and " # % < > ? \ ^ ` { | } are escaped,
 * '/' and the other reserved characters stay. COMPONENT: one path segment
 * or query value (a file name in a link, an argument): everything but the
 * unreserved A-Z a-z 0-9 - . _ ~ is escaped. */
#define SWS_ESCAPE_URI_PATH       0
#define SWS_ESCAPE_URI_COMPONENT  1
/* The length of src escaped in mode. */
size_t     sws_escape_uri_len(const u_char *src, size_t len, sws_uint_t mode);
/* Write src escaped into dst (sws_escape_uri_len() bytes); returns the end. */
u_char    *sws_escape_uri(u_char *dst, const u_char *src, size_t len, sws_uint_t mode);

/* base64 (RFC 4648, standard alphabet). Decode into dst (room for
 * len * 3 / 4 bytes; "=" padding optional): the decoded length, or -1 for a
 * byte outside the alphabet, misplaced padding or an impossible length.
 * Encode len bytes into dst (room for 4 * ((len + 2) / 3)), padded; returns
 * the end. */
ssize_t    sws_decode_base64(u_char *dst, const u_char *src, size_t len);
u_char    *sws_encode_base64(u_char *dst, const u_char *src, size_t len);

uint32_t   sws_hash_key(const u_char *data, size_t len);
uint32_t   sws_hash_key_lc(const u_char *data, size_t len);

#endif
