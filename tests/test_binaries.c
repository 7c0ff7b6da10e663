/* test_binaries.c - Check suite for what the programs link: no test
 * framework in the production binaries, and a sandbox program (sbx) and a
 * `harness` front whose dynamic dependencies (DT_NEEDED) hold none of the
 * heavy libraries. Reads
 * the ELF files themselves: the dynamic section for DT_NEEDED, the symbol
 * tables for functions linked in statically (Check is a static archive). */
#include "common/err.h"
#include "common/fsutil.h"

#include <check.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ELF_MAX (256u << 20)

static const char *bin(void)
{
    const char *b = getenv("RL_BIN");
    return b && *b ? b : "bin";
}

typedef struct elf_file {
    char *data;
    size_t len;
} elf_file;

static void elf_load(elf_file *f, const char *name)
{
    char path[1024], err[RL_ERR_MAX];
    snprintf(path, sizeof path, "%s/%s", bin(), name);
    ck_assert_msg(fs_read_file(&f->data, &f->len, path, ELF_MAX, err) == 0, "%s", err);
    ck_assert_msg(f->len >= sizeof(Elf64_Ehdr) && !memcmp(f->data, ELFMAG, SELFMAG) &&
                      f->data[EI_CLASS] == ELFCLASS64,
                  "%s: expected a 64-bit ELF file", path);
}

/* Section i's header, checked to lie inside the file. */
static const Elf64_Shdr *elf_section(const elf_file *f, unsigned i)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f->data;
    ck_assert_uint_lt(i, eh->e_shnum);
    size_t off = eh->e_shoff + (size_t)i * eh->e_shentsize;
    ck_assert_uint_le(off + sizeof(Elf64_Shdr), f->len);
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(f->data + off);
    if (sh->sh_type != SHT_NOBITS)
        ck_assert_uint_le(sh->sh_offset + sh->sh_size, f->len);
    return sh;
}

/* Does a DT_NEEDED entry start with prefix? */
static int elf_needs(const elf_file *f, const char *prefix)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f->data;
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        const Elf64_Shdr *sh = elf_section(f, i);
        if (sh->sh_type != SHT_DYNAMIC)
            continue;
        const Elf64_Shdr *str = elf_section(f, sh->sh_link);
        const Elf64_Dyn *d = (const Elf64_Dyn *)(f->data + sh->sh_offset);
        for (size_t k = 0; k < sh->sh_size / sizeof *d && d[k].d_tag != DT_NULL; k++)
            if (d[k].d_tag == DT_NEEDED && d[k].d_un.d_val < str->sh_size &&
                !strncmp(f->data + str->sh_offset + d[k].d_un.d_val, prefix, strlen(prefix)))
                return 1;
    }
    return 0;
}

/* Does the symbol table (or the dynamic one) define or import a symbol
 * starting with prefix? */
static int elf_has_symbol(const elf_file *f, const char *prefix)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f->data;
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        const Elf64_Shdr *sh = elf_section(f, i);
        if (sh->sh_type != SHT_SYMTAB && sh->sh_type != SHT_DYNSYM)
            continue;
        const Elf64_Shdr *str = elf_section(f, sh->sh_link);
        const Elf64_Sym *s = (const Elf64_Sym *)(f->data + sh->sh_offset);
        for (size_t k = 0; k < sh->sh_size / sizeof *s; k++)
            if (s[k].st_name && s[k].st_name < str->sh_size &&
                !strncmp(f->data + str->sh_offset + s[k].st_name, prefix, strlen(prefix)))
                return 1;
    }
    return 0;
}

/* Check's runner, linked into the test runner and nowhere else. */
START_TEST(test_no_check_in_production)
{
    elf_file f;
    elf_load(&f, "check_all"); /* the reader finds it where it is */
    ck_assert(elf_has_symbol(&f, "srunner_create"));
    free(f.data);
    const char *prod[] = {"harness", "harness-core", "grpo", "sbx"};
    for (size_t i = 0; i < sizeof prod / sizeof prod[0]; i++) {
        elf_load(&f, prod[i]);
        ck_assert_msg(!elf_has_symbol(&f, "srunner_") && !elf_has_symbol(&f, "tcase_") &&
                          !elf_needs(&f, "libcheck") && !elf_needs(&f, "libsubunit"),
                      "%s/%s is linked with the Check framework", bin(), prod[i]);
        free(f.data);
    }
}
END_TEST

START_TEST(test_sbx_needs_little)
{
    elf_file f;
    elf_load(&f, "harness-core"); /* the reader sees what the commands load */
    ck_assert(elf_needs(&f, "libopenblas"));
    ck_assert(elf_needs(&f, "libgit2"));
    free(f.data);
    /* both run the sandbox command in their own process */
    const char *sandboxed[] = {"sbx", "harness"};
    for (size_t b = 0; b < 2; b++) {
        elf_load(&f, sandboxed[b]);
        ck_assert_msg(elf_needs(&f, "libseccomp"), "%s/%s does not need libseccomp", bin(),
                      sandboxed[b]);
        free(f.data);
    }
    /* sbx, and the small harness that prints the usage and runs exec */
    const char *lean[] = {"sbx", "harness"};
    const char *heavy[] = {"libopenblas", "libgfortran", "libgit2", "libcurl", "libmicrohttpd",
                           "libcheck", "libssl", "libcrypto"};
    for (size_t b = 0; b < sizeof lean / sizeof lean[0]; b++) {
        elf_load(&f, lean[b]);
        for (size_t i = 0; i < sizeof heavy / sizeof heavy[0]; i++)
            ck_assert_msg(!elf_needs(&f, heavy[i]), "%s/%s needs %s", bin(), lean[b], heavy[i]);
        ck_assert(!elf_has_symbol(&f, "openblas_") && !elf_has_symbol(&f, "git_"));
        free(f.data);
    }
}
END_TEST

Suite *binaries_suite(void)
{
    Suite *s = suite_create("binaries");
    TCase *tc = tcase_create("link");
    tcase_add_test(tc, test_no_check_in_production);
    tcase_add_test(tc, test_sbx_needs_little);
    suite_add_tcase(s, tc);
    return s;
}
