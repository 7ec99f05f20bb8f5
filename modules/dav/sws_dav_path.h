/*
 * Decoding a Destination's path (sws_dav_path.c).
 */
#ifndef SWS_DAV_PATH_H
#define SWS_DAV_PATH_H

#include <stddef.h>
#include <scalws/sws_types.h>

#define SWS_DAV_PATH_INVALID  ((size_t) -1)

/* [p, last) decoded into out (room for last - p + 1 bytes, NUL-terminated):
 * its length, or SWS_DAV_PATH_INVALID. */
size_t sws_dav_decode_path(const u_char *p, const u_char *last, u_char *out);

#endif
