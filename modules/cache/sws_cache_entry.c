/*
 * The stored-entry format (sws_cache.h): the writer, and the reader that
 * trusts nothing. A file under the cache's path may be truncated, from an
 * older version, another program's, or damaged: every length is checked
 * against what was read before it is used, the fields are walked once in
 * full, and the header carries a checksum so that damage inside it is
 * noticed too. The body's length must match the file's size exactly, so
 * a file cut short is refused rather than served short.
 *
 * A field is: name length (2 bytes), value length (2 bytes), name, value.
 * Names are tokens (RFC 9110 5.6.2), values have no CR, LF or NUL.
 */
#include "sws_cache.h"

#define SWS_CACHE_FIXED  sizeof(sws_cache_file_header_t)

uint32_t
sws_cache_checksum(const u_char *p, size_t len)
{
    uint32_t  h = 2166136261u;

    while (len--) {
        h = (h ^ *p++) * 16777619u;
    }
    return h;
}

/* Two 64-bit lanes, each a multiply-and-rotate over 8-byte words with its
 * own seed and a final avalanche: not cryptographic (keys are compared in
 * full where they matter), only well spread for file names. */
static uint64_t
sws_cache_mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

void
sws_cache_digest(const u_char *key, size_t len, u_char digest[16])
{
    uint64_t  a = 0x9e3779b97f4a7c15ULL ^ len, b = 0x6a09e667f3bcc909ULL ^ (len << 1), w;
    size_t    i;

    for (i = 0; i + 8 <= len; i += 8) {
        memcpy(&w, key + i, 8);
        a = ((a ^ w) * 0x87c37b91114253d5ULL);
        a = (a << 31) | (a >> 33);
        b = ((b ^ (w + 0x2545f4914f6cdd1dULL)) * 0x4cf5ad432745937fULL);
        b = (b << 29) | (b >> 35);
    }
    w = 0;
    memcpy(&w, key + i, len - i);
    a = sws_cache_mix(a ^ w ^ 0x52dce729ULL);
    b = sws_cache_mix(b ^ w ^ a);
    a = sws_cache_mix(a + b);
    memcpy(digest, &a, 8);
    memcpy(digest + 8, &b, 8);
}

size_t
sws_cache_entry_header_size(size_t key_len, size_t vary_len, size_t fields_len)
{
    return SWS_CACHE_FIXED + key_len + vary_len + fields_len;
}

size_t
sws_cache_field_size(const sws_str_t *name, const sws_str_t *value)
{
    return 4 + name->len + value->len;
}

u_char *
sws_cache_field_write(u_char *p, const sws_str_t *name, const sws_str_t *value)
{
    uint16_t  n = (uint16_t) name->len, v = (uint16_t) value->len;

    memcpy(p, &n, 2);
    memcpy(p + 2, &v, 2);
    p += 4;
    memcpy(p, name->data, name->len);
    p += name->len;
    if (value->len) {
        memcpy(p, value->data, value->len);
    }
    return p + value->len;
}

u_char *
sws_cache_entry_write(u_char *buf, sws_cache_file_header_t *h, const u_char *key,
    const u_char *vary, const u_char *fields)
{
    u_char  *p = buf;

    memcpy(h->magic, SWS_CACHE_MAGIC, 8);
    h->version = SWS_CACHE_VERSION;
    h->header_len = (uint32_t) sws_cache_entry_header_size(h->key_len, h->vary_len,
                                                           h->fields_len + h->parts_len);
    h->checksum = 0;
    p += SWS_CACHE_FIXED;
    memcpy(p, key, h->key_len);
    p += h->key_len;
    if (h->vary_len) {
        memcpy(p, vary, h->vary_len);
        p += h->vary_len;
    }
    if (h->fields_len + h->parts_len) {
        memcpy(p, fields, h->fields_len + h->parts_len);    /* a partial entry's parts too */
        p += h->fields_len + h->parts_len;
    }
    memcpy(buf, h, SWS_CACHE_FIXED);
    h->checksum = sws_cache_checksum(buf, h->header_len);
    memcpy(buf, h, SWS_CACHE_FIXED);
    return p;
}

static int
sws_cache_is_tchar(u_char c)
{
    /* RFC 9110 5.6.2 tchar */
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
        return 1;
    }
    return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

const char *
sws_cache_entry_parse(const u_char *p, size_t len, uint64_t total, sws_cache_entry_t *e)
{
    sws_cache_file_header_t  h;
    sws_cache_part_t         part;
    uint64_t                 end;
    uint32_t                 pos, count, sum;
    uint16_t                 n, v;
    const u_char            *f;
    size_t                   i;

    if (len < SWS_CACHE_FIXED || total < SWS_CACHE_FIXED) {
        return "too short";
    }
    memcpy(&h, p, SWS_CACHE_FIXED);
    if (memcmp(h.magic, SWS_CACHE_MAGIC, 8) != 0) {
        return "not a cache entry";
    }
    if (h.version != SWS_CACHE_VERSION) {
        return "of another version";
    }
    if (h.key_len == 0 || h.key_len > SWS_CACHE_MAX_KEY || h.base_len == 0
        || h.base_len > h.key_len || h.vary_len > SWS_CACHE_MAX_KEY
        || h.fields_len > SWS_CACHE_MAX_HEADER || h.nfields > SWS_CACHE_MAX_FIELDS
        || h.parts_len > SWS_CACHE_MAX_PARTS * sizeof(sws_cache_part_t)
        || h.parts_len % sizeof(sws_cache_part_t) != 0
        || (uint64_t) h.header_len
           != sws_cache_entry_header_size(h.key_len, h.vary_len,
                                          (size_t) h.fields_len + h.parts_len))
    {
        return "has invalid lengths";
    }
    if (h.header_len > len) {
        return "is truncated in its header";
    }
    if (total < h.header_len || total - h.header_len != h.body_len) {
        return "has a body of the wrong length";
    }
    if (h.status < 100 || h.status > 599 || (h.flags & ~SWS_CACHE_F_ALL)
        || h.response_time < 0 || h.initial_age < 0 || h.swr < 0 || h.sie < 0
        || h.last_modified < -1)
    {
        return "has invalid values";
    }
    /* parts (a 206's) and nothing else, or neither */
    if ((h.parts_len != 0) != ((h.flags & SWS_CACHE_F_PARTIAL) != 0)
        || ((h.flags & SWS_CACHE_F_PARTIAL) && h.status != 206))
    {
        return "has invalid parts";
    }
    sum = h.checksum;
    {
        /* the checksum covers the header with its own field zero */
        sws_cache_file_header_t  z = h;
        uint32_t                 c;

        z.checksum = 0;
        c = sws_cache_checksum((const u_char *) &z, SWS_CACHE_FIXED);
        /* continue FNV over the rest of the header */
        for (i = SWS_CACHE_FIXED; i < h.header_len; i++) {
            c = (c ^ p[i]) * 16777619u;
        }
        if (c != sum) {
            return "has a bad checksum";
        }
    }

    e->h = h;
    e->key = p + SWS_CACHE_FIXED;
    e->vary = e->key + h.key_len;
    e->fields = e->vary + h.vary_len;
    e->body = NULL;
    e->etag.len = 0;
    e->etag.data = NULL;
    e->parts = e->fields + h.fields_len;

    if (h.vary_len && h.base_len == h.key_len) {
        return "has Vary names but no variant key";
    }
    for (i = 0; i < h.vary_len; i++) {
        if (!sws_cache_is_tchar(e->vary[i]) && e->vary[i] != ',') {
            return "has invalid Vary names";
        }
    }
    /* every field, exactly nfields of them filling fields_len */
    f = e->fields;
    for (pos = 0, count = 0; pos < h.fields_len; count++) {
        if (pos + 4 > h.fields_len) {
            return "has a truncated field";
        }
        memcpy(&n, f + pos, 2);
        memcpy(&v, f + pos + 2, 2);
        if (n == 0 || (uint64_t) pos + 4 + n + v > h.fields_len) {
            return "has a field of an invalid length";
        }
        for (i = 0; i < n; i++) {
            if (!sws_cache_is_tchar(f[pos + 4 + i])) {
                return "has an invalid field name";
            }
        }
        for (i = 0; i < v; i++) {
            u_char c = f[pos + 4 + n + i];
            if (c == '\r' || c == '\n' || c == '\0') {
                return "has an invalid field value";
            }
        }
        if (n == 4 && sws_strncasecmp((u_char *) f + pos + 4, (u_char *) "etag", 4) == 0) {
            e->etag.data = (u_char *) f + pos + 4 + n;
            e->etag.len = v;
        }
        pos += 4 + (uint32_t) n + v;
    }
    if (count != h.nfields) {
        return "has a wrong number of fields";
    }
    /* the parts: sorted, apart, none empty, inside the body */
    for (pos = 0, end = 0; pos < h.parts_len; pos += sizeof(sws_cache_part_t)) {
        memcpy(&part, e->parts + pos, sizeof(part));
        if (part.start >= part.end || part.end > h.body_len || (pos && part.start <= end)) {
            return "has invalid parts";
        }
        end = part.end;
    }
    if (len >= h.header_len + h.body_len) {
        e->body = p + h.header_len;
    }
    return NULL;
}

/* An entry this module wrote into shared memory itself (never read from
 * outside): its parts found without checking them again, for the hit path.
 * The ETag is not looked for (a revalidation reads it from the file). */
void
sws_cache_entry_map(const u_char *p, size_t len, sws_cache_entry_t *e)
{
    memcpy(&e->h, p, SWS_CACHE_FIXED);
    e->key = p + SWS_CACHE_FIXED;
    e->vary = e->key + e->h.key_len;
    e->fields = e->vary + e->h.vary_len;
    e->body = len >= e->h.header_len + e->h.body_len ? p + e->h.header_len : NULL;
    e->etag.len = 0;
    e->etag.data = NULL;
    e->parts = e->fields + e->h.fields_len;
}

int
sws_cache_entry_value(const sws_cache_entry_t *e, const char *lcname, size_t len,
    sws_str_t *value)
{
    sws_str_t  name;
    uint32_t   pos = 0;

    while (sws_cache_entry_field(e, &pos, &name, value)) {
        if (name.len == len && sws_strncasecmp(name.data, (u_char *) lcname, len) == 0) {
            return 1;
        }
    }
    return 0;
}
