/*
 * Shared memory zones: declaration (same name, size and tag -> same zone,
 * another tag or size -> refused), the init callback, the lock across
 * processes (and a holder that dies), and a reload: the same memory with the
 * old data, or new memory for a new size, and a thrown-away configuration
 * that leaves the old zone alone. (tests/unit/test_upstream.c covers more.)
 * Keyed zones (sws_keyed_zone.h): zone=NAME:SIZE, declaration and nginx's
 * errors for a zone declared twice or named and never declared, records
 * (lookup, insert, touch, delete), eviction of the least recently used
 * keys or refusal when full, records kept across a reload, the limits of a
 * level; and the inspection of a configuration's zones.
 */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "sws_conf_internal.h"
#include "sws_cycle.h"
#include "sws_log_internal.h"
#include "sws_shm_internal.h"
#include <scalws/sws_shm.h>
#include <scalws/sws_keyed_zone.h>
#include <scalws/sws_slab.h>

#define STR(s)  (&(sws_str_t) sws_string(s))

static struct sws_log_s  tlog;
static char              logpath[] = "/tmp/sws_test_shm_log.XXXXXX";
static int               tag_a, tag_b;

/* Two owners of keyed zones: modules of the fake cycle. */
static sws_module_t   mod_a = { .name = "mod_a" }, mod_b = { .name = "mod_b" };
static sws_module_t  *mods[] = { &mod_a, &mod_b };

typedef struct {
    struct sws_cycle_s  cycle;
    struct sws_conf_s   conf;
} fake_t;

static void
fake_init(fake_t *f, fake_t *old)
{
    sws_memzero(f, sizeof(*f));
    f->cycle.pool = sws_pool_create(4096, &tlog);
    ck_assert_ptr_nonnull(f->cycle.pool);
    f->cycle.log = &tlog;
    f->cycle.old_cycle = old ? &old->cycle : NULL;
    f->cycle.modules = mods;
    f->cycle.modules_n = 2;
    f->conf.cycle = &f->cycle;
    f->conf.pool = f->cycle.pool;
    f->conf.log = &tlog;
}

static const char *
log_text(void)
{
    static char buf[65536];
    ssize_t     n = pread(tlog.fd, buf, sizeof(buf) - 1, 0);

    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static int
logged_text(const char *what)
{
    return strstr(log_text(), what) != NULL;
}

static int init_calls;
static void *init_old;

static sws_int_t
counting_init(sws_shm_zone_t *zone, void *old)
{
    init_calls++;
    init_old = old;
    if (old) {
        zone->data = old;
        return SWS_OK;
    }
    *(uint64_t *) zone->addr = 0x5157;
    zone->data = zone->addr;
    return SWS_OK;
}

static sws_int_t
failing_init(sws_shm_zone_t *zone, void *old)
{
    (void) zone;
    (void) old;
    return SWS_ERROR;
}

/* ---------------------------------------------------------------- */

START_TEST(add_same_name_same_tag)
{
    fake_t          f;
    sws_shm_zone_t *a, *b, *c;

    fake_init(&f, NULL);
    a = sws_shm_zone_add(&f.conf, STR("one"), 100000, NULL, &tag_a);
    b = sws_shm_zone_add(&f.conf, STR("one"), 100000, NULL, &tag_a);
    c = sws_shm_zone_add(&f.conf, STR("two"), 1, NULL, &tag_a);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_eq(a, b);
    ck_assert_ptr_ne(a, c);
    ck_assert_int_eq((int) a->name.len, 3);
    ck_assert_int_eq(memcmp(a->name.data, "one", 3), 0);
    ck_assert_uint_ge(a->size, 100000);
    ck_assert_uint_eq(((uintptr_t) a->addr) % 64, 0);
    ck_assert_uint_eq(a->addr[99999], 0);         /* zeroed */
    /* another size in the same configuration: refused */
    ck_assert_ptr_null(sws_shm_zone_add(&f.conf, STR("one"), 300000, NULL, &tag_a));
    ck_assert_ptr_null(sws_shm_zone_add(&f.conf, STR(""), 8192, NULL, &tag_a));
    ck_assert_ptr_null(sws_shm_zone_add(&f.conf, STR("zero"), 0, NULL, &tag_a));
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

START_TEST(add_same_name_other_tag_refused)
{
    fake_t f;

    fake_init(&f, NULL);
    ck_assert_ptr_nonnull(sws_shm_zone_add(&f.conf, STR("z"), 8192, NULL, &tag_a));
    ck_assert_ptr_null(sws_shm_zone_add(&f.conf, STR("z"), 8192, NULL, &tag_b));
    ck_assert_ptr_nonnull(strstr(log_text(), "by another module"));
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

START_TEST(init_callback_and_data)
{
    fake_t          f;
    sws_shm_zone_t *z;

    init_calls = 0;
    fake_init(&f, NULL);
    z = sws_shm_zone_add(&f.conf, STR("init"), 8192, counting_init, &tag_a);
    ck_assert_ptr_nonnull(z);
    ck_assert_int_eq(init_calls, 1);
    ck_assert_ptr_null(init_old);
    ck_assert_ptr_eq(z->data, z->addr);
    ck_assert_uint_eq(*(uint64_t *) z->addr, 0x5157);
    /* asked again: no second init */
    ck_assert_ptr_eq(sws_shm_zone_add(&f.conf, STR("init"), 8192, counting_init, &tag_a), z);
    ck_assert_int_eq(init_calls, 1);
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

START_TEST(init_failure_refuses)
{
    fake_t f;

    fake_init(&f, NULL);
    ck_assert_ptr_null(sws_shm_zone_add(&f.conf, STR("bad"), 8192, failing_init, &tag_a));
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* Memory written by a child is seen by the parent, and the lock makes
 * increments from two processes add up. */
START_TEST(shared_across_fork_with_lock)
{
    fake_t             f;
    sws_shm_zone_t    *z;
    volatile uint64_t *counter;
    pid_t              pid;
    int                i, status;

    fake_init(&f, NULL);
    z = sws_shm_zone_add(&f.conf, STR("count"), 8192, NULL, &tag_a);
    ck_assert_ptr_nonnull(z);
    counter = (volatile uint64_t *) z->addr;
    *counter = 0;

    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        for (i = 0; i < 200000; i++) {
            sws_shm_lock(z);
            (*counter)++;
            sws_shm_unlock(z);
        }
        _exit(0);
    }
    for (i = 0; i < 200000; i++) {
        sws_shm_lock(z);
        (*counter)++;
        sws_shm_unlock(z);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_uint_eq(*counter, 400000);
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* A process that dies holding the lock does not block the others. */
START_TEST(lock_holder_dies)
{
    fake_t          f;
    sws_shm_zone_t *z;
    pid_t           pid;
    int             status;

    fake_init(&f, NULL);
    z = sws_shm_zone_add(&f.conf, STR("dead"), 8192, NULL, &tag_a);
    ck_assert_ptr_nonnull(z);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        sws_shm_lock(z);
        _exit(0);                         /* dies with it */
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    alarm(5);                             /* a deadlock fails the test */
    sws_shm_lock(z);
    sws_shm_unlock(z);
    sws_shm_lock(z);
    sws_shm_unlock(z);
    alarm(0);
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* The master frees the lock of a child it reaped, and only that child's:
 * the next lock is immediate (no wait for the owner check), and a lock
 * held by a live process stays held. */
START_TEST(master_unlocks_what_a_dead_child_held)
{
    fake_t          f;
    sws_shm_zone_t *z;
    pid_t           pid;
    int             status;

    fake_init(&f, NULL);
    z = sws_shm_zone_add(&f.conf, STR("held"), 8192, NULL, &tag_a);
    ck_assert_ptr_nonnull(z);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        sws_shm_lock(z);
        _exit(0);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_int_eq(sws_shm_mutex_unlock_dead(sws_shm_zone_mutex(z), pid + 1), 0);
    ck_assert_int_eq(*(volatile uint32_t *) sws_shm_zone_mutex(z), (uint32_t) pid);
    sws_shm_unlock_dead(pid, f.cycle.log);
    ck_assert_int_eq(*(volatile uint32_t *) sws_shm_zone_mutex(z), 0);
    sws_shm_lock(z);
    ck_assert_int_eq(sws_shm_mutex_unlock_dead(sws_shm_zone_mutex(z), pid), 0);
    ck_assert_int_eq(*(volatile uint32_t *) sws_shm_zone_mutex(z), (uint32_t) getpid());
    sws_shm_unlock(z);
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* Reload: a zone of the same name, size and tag takes the old mapping and
 * its data; the old configuration's end does not unmap it; a new size gets
 * new memory. */
START_TEST(reload_takes_over)
{
    fake_t          old, f;
    sws_shm_zone_t *zo, *zn, *zs;
    u_char         *addr;

    init_calls = 0;
    fake_init(&old, NULL);
    zo = sws_shm_zone_add(&old.conf, STR("keep"), 65536, counting_init, &tag_a);
    zs = sws_shm_zone_add(&old.conf, STR("resize"), 65536, NULL, &tag_a);
    ck_assert_ptr_nonnull(zo);
    ck_assert_ptr_nonnull(zs);
    addr = zo->addr;
    memcpy(addr + 100, "survives", 9);
    memcpy(zs->addr + 100, "old", 4);

    fake_init(&f, &old);
    zn = sws_shm_zone_add(&f.conf, STR("keep"), 65536, counting_init, &tag_a);
    zs = sws_shm_zone_add(&f.conf, STR("resize"), 2 * 65536, NULL, &tag_a);
    ck_assert_ptr_nonnull(zn);
    ck_assert_ptr_nonnull(zs);

    ck_assert_int_eq(init_calls, 2);
    ck_assert_ptr_eq(init_old, addr);            /* given the old data */
    ck_assert_ptr_eq(zn->addr, addr);
    ck_assert_uint_eq(zs->addr[100], 0);         /* a new zone */

    sws_pool_destroy(old.cycle.pool);            /* the old configuration ends */
    ck_assert_str_eq((char *) addr + 100, "survives");
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* A new configuration that fails leaves the old zone alone. */
START_TEST(failed_reload_keeps_old_zone)
{
    fake_t          old, f;
    sws_shm_zone_t *zo, *zn;
    u_char         *addr;

    fake_init(&old, NULL);
    zo = sws_shm_zone_add(&old.conf, STR("keep"), 65536, NULL, &tag_a);
    ck_assert_ptr_nonnull(zo);
    addr = zo->addr;
    memcpy(addr, "still here", 11);

    fake_init(&f, &old);
    zn = sws_shm_zone_add(&f.conf, STR("keep"), 65536, NULL, &tag_a);
    ck_assert_ptr_nonnull(zn);
    ck_assert_ptr_null(sws_shm_zone_add(&f.conf, STR("broken"), 8192, failing_init, &tag_a));
    ck_assert_ptr_eq(zn->addr, addr);
    sws_pool_destroy(f.cycle.pool);              /* thrown away */
    ck_assert_str_eq((char *) addr, "still here");
    sws_pool_destroy(old.cycle.pool);
}
END_TEST

typedef struct {
    uint64_t  n;
} rec_t;

static const sws_keyed_zone_type_t  evicting = {
    .name = "ev", .directive = "ev_zone", .tag = &mod_a,
    .record_size = sizeof(rec_t), .evict = 1,
};
static const sws_keyed_zone_type_t  refusing = {
    .name = "rf", .directive = "rf_zone", .tag = &mod_b,
    .record_size = sizeof(rec_t), .evict = 0,
};

static sws_keyed_zone_t *
add(fake_t *f, const sws_keyed_zone_type_t *type, const char *name, size_t size)
{
    sws_str_t  n = { strlen(name), (u_char *) name };

    return sws_keyed_zone_add(&f->conf, type, &n, size, STR("$binary_remote_addr"), NULL);
}

static rec_t *
insert(sws_keyed_zone_t *z, const char *key)
{
    rec_t *r;

    sws_keyed_zone_lock(z);
    r = sws_keyed_zone_insert(z, (const u_char *) key, strlen(key));
    sws_keyed_zone_unlock(z);
    return r;
}

static rec_t *
lookup(sws_keyed_zone_t *z, const char *key)
{
    rec_t *r;

    sws_keyed_zone_lock(z);
    r = sws_keyed_zone_lookup(z, (const u_char *) key, strlen(key));
    sws_keyed_zone_unlock(z);
    return r;
}

START_TEST(parse_spec)
{
    fake_t     f;
    sws_str_t  name;
    size_t     size;

    fake_init(&f, NULL);
    ck_assert_int_eq(sws_keyed_zone_parse(&f.conf, STR("one:1m"), &name, &size), SWS_OK);
    ck_assert_int_eq((int) name.len, 3);
    ck_assert_int_eq(memcmp(name.data, "one", 3), 0);
    ck_assert_uint_eq(size, 1048576);
    ck_assert_int_eq(sws_keyed_zone_parse(&f.conf, STR("one:16k"), &name, &size), SWS_ERROR);
    ck_assert(logged_text("zone \"one:16k\" is too small"));
    ck_assert_int_eq(sws_keyed_zone_parse(&f.conf, STR(":1m"), &name, &size), SWS_ERROR);
    ck_assert_int_eq(sws_keyed_zone_parse(&f.conf, STR("one"), &name, &size), SWS_ERROR);
    ck_assert_int_eq(sws_keyed_zone_parse(&f.conf, STR("one:x"), &name, &size), SWS_ERROR);
    ck_assert(logged_text("invalid zone size \"one:x\""));
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

START_TEST(declare_twice_and_resolve)
{
    fake_t                 f;
    sws_keyed_zone_t      *a;
    sws_array_t           *uses;
    sws_keyed_zone_ref_t  *ref;

    fake_init(&f, NULL);
    a = add(&f, &evicting, "one", 65536);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_null(add(&f, &evicting, "one", 131072));
    ck_assert(logged_text("the size 131072 of shared memory zone \"one\" conflicts with already "
                     "declared size 65536"));
    ck_assert_ptr_null(add(&f, &evicting, "one", 65536));
    ck_assert(logged_text("ev_zone \"one\" is already bound to key \"$binary_remote_addr\""));
    /* another module's zone may have the same name */
    ck_assert_ptr_nonnull(add(&f, &refusing, "one", 65536));

    uses = sws_array_create(f.conf.pool, 2, sizeof(sws_keyed_zone_ref_t));
    ref = sws_array_push(uses);
    ck_assert_int_eq(sws_keyed_zone_use(&f.conf, ref, STR("one")), SWS_OK);
    ck_assert_int_eq(sws_keyed_zone_resolve(&f.conf, &evicting, uses), SWS_OK);
    ck_assert_ptr_eq(ref->zone, a);
    ck_assert_int_eq(sws_keyed_zone_resolve(&f.conf, &evicting, NULL), SWS_OK);
    ref = sws_array_push(uses);
    ck_assert_int_eq(sws_keyed_zone_use(&f.conf, ref, STR("two")), SWS_OK);
    ck_assert_int_eq(sws_keyed_zone_resolve(&f.conf, &evicting, uses), SWS_ERROR);
    ck_assert(logged_text("zero size shared memory zone \"two\""));
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

START_TEST(records)
{
    fake_t             f;
    sws_keyed_zone_t  *z;
    rec_t             *r;

    fake_init(&f, NULL);
    z = add(&f, &refusing, "r", 65536);
    ck_assert_ptr_nonnull(z);
    ck_assert_ptr_null(lookup(z, "10.0.0.1"));
    r = insert(z, "10.0.0.1");
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->n, 0);                      /* zeroed */
    r->n = 7;
    ck_assert_ptr_eq(lookup(z, "10.0.0.1"), r);
    ck_assert_ptr_null(lookup(z, "10.0.0.10"));
    ck_assert_uint_eq(sws_keyed_zone_count(z), 1);
    sws_keyed_zone_lock(z);
    sws_keyed_zone_delete(z, r);
    sws_keyed_zone_unlock(z);
    ck_assert_ptr_null(lookup(z, "10.0.0.1"));
    ck_assert_uint_eq(sws_keyed_zone_count(z), 0);
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* A full evicting zone drops the least recently used keys; a full
 * refusing one refuses new keys and keeps the others. */
START_TEST(full_zones)
{
    fake_t             f;
    sws_keyed_zone_t  *ev, *rf;
    char               key[32];
    rec_t             *first, *r;
    int                i, n;

    fake_init(&f, NULL);
    ev = add(&f, &evicting, "e", 32768);
    rf = add(&f, &refusing, "f", 32768);
    ck_assert_ptr_nonnull(ev);
    ck_assert_ptr_nonnull(rf);

    first = insert(ev, "key-first");
    ck_assert_ptr_nonnull(first);
    insert(ev, "key-second");
    for (i = 0; i < 5000; i++) {
        snprintf(key, sizeof(key), "key-%d", i);
        ck_assert_ptr_nonnull(insert(ev, key));      /* never refused */
        if (i % 16 == 0) {
            sws_keyed_zone_lock(ev);
            sws_keyed_zone_touch(ev, first);         /* kept in use */
            sws_keyed_zone_unlock(ev);
        }
    }
    ck_assert_ptr_eq(lookup(ev, "key-first"), first);
    ck_assert_ptr_null(lookup(ev, "key-second"));   /* the oldest went */
    ck_assert_ptr_nonnull(lookup(ev, "key-4999"));
    ck_assert_uint_lt(sws_keyed_zone_count(ev), 5000);

    for (n = 0; n < 5000; n++) {
        snprintf(key, sizeof(key), "key-%d", n);
        if ((r = insert(rf, key)) == NULL) {
            break;
        }
        r->n = (uint64_t) n;
    }
    ck_assert_int_gt(n, 100);
    ck_assert_int_lt(n, 5000);                       /* refused when full */
    ck_assert_uint_eq(sws_keyed_zone_count(rf), (sws_uint_t) n);
    r = lookup(rf, "key-0");
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->n, 0);
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* A reload with the same name and size keeps the records; another size
 * starts afresh. */
START_TEST(reload_keeps_records)
{
    fake_t             old, f;
    sws_keyed_zone_t  *z, *z2, *same, *resized;
    rec_t             *r;

    fake_init(&old, NULL);
    z = add(&old, &evicting, "keep", 65536);
    z2 = add(&old, &evicting, "resize", 65536);
    ck_assert_ptr_nonnull(z);
    ck_assert_ptr_nonnull(z2);
    insert(z, "a")->n = 42;
    ck_assert_ptr_nonnull(insert(z2, "b"));

    fake_init(&f, &old);
    same = add(&f, &evicting, "keep", 65536);
    resized = add(&f, &evicting, "resize", 131072);
    ck_assert_ptr_nonnull(same);
    ck_assert_ptr_nonnull(resized);
    sws_pool_destroy(old.cycle.pool);
    r = lookup(same, "a");
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->n, 42);
    ck_assert_ptr_null(lookup(resized, "b"));
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

typedef struct {
    sws_keyed_zone_ref_t  ref;
    int                   mine;
} use_t;

START_TEST(limits_of_levels)
{
    fake_t                    f;
    sws_keyed_zone_limits_t  *http, *loc, *bare;
    use_t                    *u;
    char                     *err;

    fake_init(&f, NULL);
    http = sws_keyed_zone_limits_create(&f.conf);
    loc = sws_keyed_zone_limits_create(&f.conf);
    bare = sws_keyed_zone_limits_create(&f.conf);
    u = sws_keyed_zone_limits_add(&f.conf, http, sizeof(use_t), STR("one"), &err);
    ck_assert_ptr_nonnull(u);
    u->mine = 5;
    ck_assert_ptr_null(sws_keyed_zone_limits_add(&f.conf, http, sizeof(use_t), STR("one"),
                                                 &err));
    ck_assert_str_eq(err, "is duplicate");
    http->status = 429;
    ck_assert_ptr_nonnull(add(&f, &evicting, "one", 65536));   /* declared after use */

    ck_assert_ptr_eq(sws_keyed_zone_limits_merge(&f.conf, &evicting, http, bare), SWS_CONF_OK);
    ck_assert_ptr_eq(bare->uses, http->uses);                  /* inherited */
    ck_assert_int_eq(bare->status, 429);
    ck_assert_uint_eq(bare->log_level, SWS_LOG_ERR);
    ck_assert_int_eq(bare->dry_run, 0);
    ck_assert_ptr_nonnull(((use_t *) bare->uses->elts)->ref.zone);
    ck_assert_int_eq(((use_t *) bare->uses->elts)->mine, 5);

    ck_assert_ptr_nonnull(sws_keyed_zone_limits_add(&f.conf, loc, sizeof(use_t), STR("nope"),
                                                    &err));
    ck_assert_ptr_eq(sws_keyed_zone_limits_merge(&f.conf, &evicting, http, loc),
                     SWS_CONF_ERROR);
    ck_assert(logged_text("zero size shared memory zone \"nope\""));
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* The zones of a configuration, listed and inspected by name. */
START_TEST(inspection)
{
    fake_t               f;
    sws_keyed_zone_t    *z;
    sws_shm_zone_t      *shm, *plain;
    sws_shm_zone_info_t  info;
    sws_slab_stat_t      st;
    size_t               used;
    sws_uint_t           i, n, seen = 0;
    char                 key[32];

    fake_init(&f, NULL);
    z = add(&f, &evicting, "one", 65536);
    ck_assert_ptr_nonnull(z);
    plain = sws_shm_zone_add(&f.conf, STR("plain"), 8192, NULL, &f);
    ck_assert_ptr_nonnull(plain);

    ck_assert_uint_eq(sws_shm_zone_count(&f.cycle), 2);
    for (i = 0; i < 2; i++) {
        shm = sws_shm_zone_get(&f.cycle, i);
        ck_assert_ptr_nonnull(shm);
        seen |= shm == plain ? 1 : 2;
    }
    ck_assert_uint_eq(seen, 3);
    ck_assert_ptr_null(sws_shm_zone_get(&f.cycle, 2));
    ck_assert_ptr_null(sws_shm_zone_find(&f.cycle, STR("one")));
    shm = sws_shm_zone_find(&f.cycle, STR("ev:one"));
    ck_assert_ptr_nonnull(shm);

    info.size = sizeof(info);
    ck_assert_int_eq(sws_shm_zone_info(&f.cycle, shm, &info), SWS_OK);
    ck_assert_uint_eq(info.size, sizeof(info));
    ck_assert_int_eq((int) info.name.len, 6);
    ck_assert_str_eq(info.owner, "mod_a");
    ck_assert_uint_eq(info.zone_size, 65536);
    ck_assert_ptr_nonnull(info.slab);
    ck_assert_uint_gt(info.pages, 0);
    ck_assert_uint_eq(info.used_pages + info.free_pages, info.pages);
    used = info.used_pages;

    for (i = 0; i < 200; i++) {
        snprintf(key, sizeof(key), "client-%u", (unsigned) i);
        ck_assert_ptr_nonnull(insert(z, key));
    }
    ck_assert_int_eq(sws_shm_zone_info(&f.cycle, shm, &info), SWS_OK);
    ck_assert_uint_gt(info.used_pages, used);
    n = sws_slab_nclasses(info.slab);
    ck_assert_uint_gt(n, 1);
    for (i = 0, used = 0; i < n; i++) {
        ck_assert_int_eq(sws_slab_stat(info.slab, i, &st), SWS_OK);
        used += st.used;
    }
    ck_assert_uint_ge(used, 200);

    ck_assert_int_eq(sws_shm_zone_info(&f.cycle, plain, &info), SWS_OK);
    ck_assert_str_eq(info.owner, "core");
    ck_assert_ptr_null(info.slab);
    ck_assert_uint_eq(info.pages, 0);

    info.size = offsetof(sws_shm_zone_info_t, owner);   /* an impossible caller */
    ck_assert_int_eq(sws_shm_zone_info(&f.cycle, plain, &info), SWS_ERROR);
    sws_pool_destroy(f.cycle.pool);
    ck_assert_uint_eq(sws_shm_zone_count(&f.cycle), 0);
}
END_TEST

static Suite *
shm_suite(void)
{
    Suite *s = suite_create("shm");
    TCase *tc = tcase_create("zones");

    tcase_add_test(tc, add_same_name_same_tag);
    tcase_add_test(tc, add_same_name_other_tag_refused);
    tcase_add_test(tc, init_callback_and_data);
    tcase_add_test(tc, init_failure_refuses);
    tcase_add_test(tc, shared_across_fork_with_lock);
    tcase_add_test(tc, lock_holder_dies);
    tcase_add_test(tc, master_unlocks_what_a_dead_child_held);
    tcase_add_test(tc, reload_takes_over);
    tcase_add_test(tc, failed_reload_keeps_old_zone);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);

    tc = tcase_create("keyed");
    tcase_add_test(tc, parse_spec);
    tcase_add_test(tc, declare_twice_and_resolve);
    tcase_add_test(tc, records);
    tcase_add_test(tc, full_zones);
    tcase_add_test(tc, reload_keeps_records);
    tcase_add_test(tc, limits_of_levels);
    tcase_add_test(tc, inspection);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr;
    int      failed;

    tlog.fd = mkstemp(logpath);
    if (tlog.fd == -1) {
        perror("mkstemp");
        return 1;
    }
    unlink(logpath);
    tlog.level = SWS_LOG_DEBUG;
    sws_time_update();

    sr = srunner_create(shm_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    close(tlog.fd);
    return failed == 0 ? 0 : 1;
}
