/*
 * Password schemes of htpasswd files, as nginx accepts them:
 *
 *   $apr1$SALT$HASH   Apache's MD5 (htpasswd -m), computed here from the
 *                     algorithm's public description (Poul-Henning Kamp's
 *                     md5crypt with the magic "$apr1$"), MD5 from OpenSSL
 *   {SHA}BASE64       base64 of SHA-1 (htpasswd -s)
 *   {SSHA}BASE64      base64 of SHA-1(password salt) followed by the salt
 *   {PLAIN}TEXT       the password itself
 *   anything else     libcrypt (libxcrypt): $2y$ / $2b$ bcrypt (htpasswd
 *                     -B), $5$ / $6$ SHA-256 / SHA-512 crypt, $1$, DES
 *
 * The computed hash is compared with the stored one in constant time
 * (CRYPTO_memcmp), so that the time taken says nothing about how much of
 * it matched.
 */
#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include "sws_auth_basic.h"

#define SWS_APR1_MAGIC     "$apr1$"
#define SWS_APR1_MAGIC_LEN 6

static const char  sws_auth_basic_itoa64[] =
    "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

static int
sws_auth_basic_prefix(const sws_str_t *s, const char *prefix, size_t n)
{
    return s->len >= n && memcmp(s->data, prefix, n) == 0;
}

/* Equal lengths (not secret) and equal bytes, in time independent of where
 * they differ. */
static int
sws_auth_basic_same(const u_char *a, size_t alen, const u_char *b, size_t blen)
{
    return alen == blen && CRYPTO_memcmp(a, b, alen) == 0;
}

static u_char *
sws_auth_basic_to64(u_char *p, uint32_t v, int n)
{
    while (--n >= 0) {
        *p++ = (u_char) sws_auth_basic_itoa64[v & 0x3f];
        v >>= 6;
    }
    return p;
}

/* A digest fetched once per process: fetching it for each of apr1's
 * thousand rounds (what EVP_md5() with EVP_DigestInit_ex does in OpenSSL
 * 3) costs more than the rounds themselves. */
static const EVP_MD *
sws_auth_basic_md(const char *name)
{
    static EVP_MD  *md5, *sha1;
    EVP_MD        **md = name[0] == 'M' ? &md5 : &sha1;

    if (*md == NULL) {
        *md = EVP_MD_fetch(NULL, name, NULL);
    }
    return *md;
}

static int
sws_auth_basic_md5(EVP_MD_CTX *ctx, const EVP_MD *md, u_char *out, const u_char *a,
    size_t alen, const u_char *b, size_t blen, const u_char *c, size_t clen)
{
    unsigned int  n;

    return EVP_DigestInit_ex2(ctx, md, NULL) == 1
           && EVP_DigestUpdate(ctx, a, alen) == 1
           && (blen == 0 || EVP_DigestUpdate(ctx, b, blen) == 1)
           && (clen == 0 || EVP_DigestUpdate(ctx, c, clen) == 1)
           && EVP_DigestFinal_ex(ctx, out, &n) == 1;
}

ssize_t
sws_auth_basic_apr1(const sws_str_t *password, const sws_str_t *setting, u_char *out)
{
    const u_char  *pw = password->data, *salt, *s;
    size_t         pwlen = password->len, saltlen, pl, i;
    u_char         fin[16], *p;
    EVP_MD_CTX    *ctx, *ctx1;
    const EVP_MD  *md = sws_auth_basic_md("MD5");
    int            ok;

    if (!sws_auth_basic_prefix(setting, SWS_APR1_MAGIC, SWS_APR1_MAGIC_LEN)) {
        return -1;
    }
    /* the salt: up to 8 bytes after the magic, until '$' */
    salt = setting->data + SWS_APR1_MAGIC_LEN;
    for (s = salt; s < setting->data + setting->len && *s != '$' && s - salt < 8; s++) {
        /* scan */
    }
    saltlen = (size_t) (s - salt);

    ctx = EVP_MD_CTX_new();
    ctx1 = EVP_MD_CTX_new();
    if (md == NULL || ctx == NULL || ctx1 == NULL) {
        EVP_MD_CTX_free(ctx);
        EVP_MD_CTX_free(ctx1);
        return -1;
    }

    /* the alternate sum: password, salt, password */
    ok = sws_auth_basic_md5(ctx1, md, fin, pw, pwlen, salt, saltlen, pw, pwlen);

    /* password, magic, salt; then the alternate sum for each 16 bytes of
     * the password; then, for each bit of the length, a NUL (1) or the
     * first byte of the password (0) */
    ok = ok && EVP_DigestInit_ex2(ctx, md, NULL) == 1
         && EVP_DigestUpdate(ctx, pw, pwlen) == 1
         && EVP_DigestUpdate(ctx, SWS_APR1_MAGIC, SWS_APR1_MAGIC_LEN) == 1
         && EVP_DigestUpdate(ctx, salt, saltlen) == 1;
    for (pl = pwlen; ok && pl > 0; pl -= sws_min(pl, 16)) {
        ok = EVP_DigestUpdate(ctx, fin, sws_min(pl, 16)) == 1;
    }
    sws_memzero(fin, sizeof(fin));
    for (i = pwlen; ok && i; i >>= 1) {
        ok = EVP_DigestUpdate(ctx, (i & 1) ? fin : pw, 1) == 1;
    }
    if (ok) {
        unsigned int  n;
        ok = EVP_DigestFinal_ex(ctx, fin, &n) == 1;
    }

    /* a thousand rounds, to slow guessing down */
    for (i = 0; ok && i < 1000; i++) {
        unsigned int  n;

        ok = EVP_DigestInit_ex2(ctx1, md, NULL) == 1
             && ((i & 1) ? EVP_DigestUpdate(ctx1, pw, pwlen) : EVP_DigestUpdate(ctx1, fin, 16))
                == 1
             && (i % 3 == 0 || EVP_DigestUpdate(ctx1, salt, saltlen) == 1)
             && (i % 7 == 0 || EVP_DigestUpdate(ctx1, pw, pwlen) == 1)
             && ((i & 1) ? EVP_DigestUpdate(ctx1, fin, 16) : EVP_DigestUpdate(ctx1, pw, pwlen))
                == 1
             && EVP_DigestFinal_ex(ctx1, fin, &n) == 1;
    }
    EVP_MD_CTX_free(ctx);
    EVP_MD_CTX_free(ctx1);
    if (!ok) {
        return -1;
    }

    p = sws_cpymem(out, SWS_APR1_MAGIC, SWS_APR1_MAGIC_LEN);
    p = sws_cpymem(p, salt, saltlen);
    *p++ = '$';
    p = sws_auth_basic_to64(p, ((uint32_t) fin[0] << 16) | ((uint32_t) fin[6] << 8) | fin[12], 4);
    p = sws_auth_basic_to64(p, ((uint32_t) fin[1] << 16) | ((uint32_t) fin[7] << 8) | fin[13], 4);
    p = sws_auth_basic_to64(p, ((uint32_t) fin[2] << 16) | ((uint32_t) fin[8] << 8) | fin[14], 4);
    p = sws_auth_basic_to64(p, ((uint32_t) fin[3] << 16) | ((uint32_t) fin[9] << 8) | fin[15], 4);
    p = sws_auth_basic_to64(p, ((uint32_t) fin[4] << 16) | ((uint32_t) fin[10] << 8) | fin[5], 4);
    p = sws_auth_basic_to64(p, fin[11], 2);
    *p = '\0';
    sws_memzero(fin, sizeof(fin));
    return p - out;
}

/* {SHA}: base64(SHA-1(password)); {SSHA}: base64(SHA-1(password salt) salt) */
static int
sws_auth_basic_sha(const sws_str_t *password, const sws_str_t *stored, int salted)
{
    u_char         raw[256], digest[EVP_MAX_MD_SIZE];
    unsigned int   dlen = 0;
    ssize_t        n;
    EVP_MD_CTX    *ctx;
    int            ok;

    if (stored->len > sizeof(raw) / 3 * 4) {
        return 0;
    }
    n = sws_decode_base64(raw, stored->data, stored->len);
    if (n < 20 || (!salted && n != 20)) {
        return 0;
    }
    ctx = EVP_MD_CTX_new();
    if (ctx == NULL) {
        return 0;
    }
    ok = EVP_DigestInit_ex2(ctx, sws_auth_basic_md("SHA1"), NULL) == 1
         && EVP_DigestUpdate(ctx, password->data, password->len) == 1
         && (!salted || n == 20 || EVP_DigestUpdate(ctx, raw + 20, (size_t) n - 20) == 1)
         && EVP_DigestFinal_ex(ctx, digest, &dlen) == 1;
    EVP_MD_CTX_free(ctx);
    return ok && dlen == 20 && CRYPTO_memcmp(digest, raw, 20) == 0;
}

/* libcrypt's crypt on NUL-terminated copies; one per worker: single-threaded */
static int
sws_auth_basic_crypt(const sws_str_t *password, const sws_str_t *hash, sws_log_t *log)
{
    static struct crypt_data  data;
    char                      pw[SWS_AUTH_BASIC_MAX_CREDENTIALS + 1], setting[CRYPT_OUTPUT_SIZE];
    char                     *out;
    int                       same;

    if (password->len >= sizeof(pw) || hash->len >= sizeof(setting)) {
        return 0;
    }
    memcpy(pw, password->data, password->len);
    pw[password->len] = '\0';
    memcpy(setting, hash->data, hash->len);
    setting[hash->len] = '\0';
    out = crypt_rn(pw, setting, &data, (int) sizeof(data));
    sws_memzero(pw, sizeof(pw));
    if (out == NULL || out[0] == '*') {
        sws_log_error(SWS_LOG_ERR, log, 0, "auth_basic: a password hash in a scheme this "
                      "libcrypt does not know (\"%.*s\")", (int) sws_min(hash->len, 4),
                      hash->data);
        return -1;
    }
    same = sws_auth_basic_same((u_char *) out, strlen(out), hash->data, hash->len);
    sws_memzero(data.output, sizeof(data.output));
    return same;
}

int
sws_auth_basic_verify(const sws_str_t *password, const sws_str_t *hash, sws_log_t *log)
{
    u_char     out[SWS_APR1_MAGIC_LEN + 8 + 1 + 22 + 1];
    sws_str_t  rest;
    ssize_t    n;

    if (sws_auth_basic_prefix(hash, SWS_APR1_MAGIC, SWS_APR1_MAGIC_LEN)) {
        n = sws_auth_basic_apr1(password, hash, out);
        return n > 0 && sws_auth_basic_same(out, (size_t) n, hash->data, hash->len);
    }
    if (sws_auth_basic_prefix(hash, "{PLAIN}", 7)) {
        return sws_auth_basic_same(password->data, password->len, hash->data + 7,
                                   hash->len - 7);
    }
    if (sws_auth_basic_prefix(hash, "{SHA}", 5)) {
        rest.data = hash->data + 5;
        rest.len = hash->len - 5;
        return sws_auth_basic_sha(password, &rest, 0);
    }
    if (sws_auth_basic_prefix(hash, "{SSHA}", 6)) {
        rest.data = hash->data + 6;
        rest.len = hash->len - 6;
        return sws_auth_basic_sha(password, &rest, 1);
    }
    return sws_auth_basic_crypt(password, hash, log);
}
