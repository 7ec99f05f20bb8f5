/*
 * What a module takes from outside itself. dlopen(RTLD_NOW) resolves a
 * module's undefined symbols in the global scope, which holds scalwsd and
 * every library scalwsd links (OpenSSL, nghttp2, libyaml, PCRE2). The
 * version script keeps the core's own internals out of it, but not those
 * libraries: a module calling SSL_new() without linking libssl would load,
 * and break when the server is built another way. So after dlopen() every
 * strong undefined symbol of the module's .dynsym must be an SDK name, or be
 * found in the module's own scope (itself and the libraries it links:
 * dlsym(handle) does not search the global scope).
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sws_sdk.h"
#include <scalws/sws_log.h>
#include <scalws/sws_module.h>


/* The first strong undefined symbol of the mapped ELF file that neither the
 * SDK nor the module's scope provides, or NULL. A file without section
 * headers (dlopen needs none) is not checked. */
static const char *
sws_sdk_foreign_import(void *handle, const u_char *map, size_t size)
{
    size_t              i, n, strsize;
    const char         *name, *strtab;
    const ElfW(Ehdr)   *eh = (const ElfW(Ehdr) *) map;
    const ElfW(Shdr)   *sh, *str;
    const ElfW(Sym)    *sym;

    if (size < sizeof(ElfW(Ehdr)) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0
        || eh->e_shentsize != sizeof(ElfW(Shdr)) || eh->e_shoff == 0
        || eh->e_shoff > size || eh->e_shnum > (size - eh->e_shoff) / sizeof(ElfW(Shdr)))
    {
        return NULL;
    }

    sh = (const ElfW(Shdr) *) (map + eh->e_shoff);

    for (i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_DYNSYM) {
            continue;
        }

        if (sh[i].sh_link >= eh->e_shnum || sh[i].sh_offset > size
            || sh[i].sh_size > size - sh[i].sh_offset)
        {
            return NULL;
        }

        str = &sh[sh[i].sh_link];
        if (str->sh_offset > size || str->sh_size > size - str->sh_offset) {
            return NULL;
        }

        sym = (const ElfW(Sym) *) (map + sh[i].sh_offset);
        n = sh[i].sh_size / sizeof(ElfW(Sym));
        strtab = (const char *) map + str->sh_offset;
        strsize = str->sh_size;

        /* weak ones may stay unresolved (_ITM_*, __gmon_start__) */
        for ( /* void */ ; n-- > 0; sym++) {
            if (sym->st_shndx != SHN_UNDEF || sym->st_name == 0 || sym->st_name >= strsize
                || ELF64_ST_BIND(sym->st_info)   /* = ELF32_ST_BIND */ != STB_GLOBAL)
            {
                continue;
            }

            name = strtab + sym->st_name;
            if (memchr(name, '\0', strsize - sym->st_name) == NULL) {
                return NULL;
            }

            if (sws_sdk_find(name) != NULL) {
                continue;
            }

            (void) dlerror();
            if (dlsym(handle, name) == NULL && dlerror() != NULL) {
                return name;
            }
        }

        return NULL;
    }

    return NULL;
}


sws_int_t
sws_sdk_check_imports(void *handle, const char *path, sws_log_t *log)
{
    int          fd;
    void        *map;
    sws_int_t    rc;
    const char  *name;
    struct stat  st;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "open() \"%s\" failed", path);
        return SWS_ERROR;
    }

    if (fstat(fd, &st) == -1) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "fstat() \"%s\" failed", path);
        close(fd);
        return SWS_ERROR;
    }

    map = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);

    if (map == MAP_FAILED) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "mmap() \"%s\" failed", path);
        return SWS_ERROR;
    }

    rc = SWS_OK;

    name = sws_sdk_foreign_import(handle, map, (size_t) st.st_size);
    if (name != NULL) {
        sws_sdk_log_missing(log, path, name);
        rc = SWS_ERROR;
    }

    munmap(map, (size_t) st.st_size);

    return rc;
}


void
sws_sdk_log_missing(sws_log_t *log, const char *path, const char *name)
{
    sws_log_error(SWS_LOG_EMERG, log, 0,
                  "module \"%s\" uses \"%s\", which is neither in the SDK of this "
                  "scalwsd (ABI %d.%d) nor in a library the module links",
                  path, name, SWS_ABI_MAJOR, SWS_ABI_MINOR);
}
