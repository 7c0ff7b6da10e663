/* stdlib.h - written into the source directory: `#include <stdlib.h>` in
 * the tests finds it first (the build has -Isrc), it includes the real
 * header with #include_next and, since the tests include it after
 * <check.h>, turns every Check assertion into a no-op. The real Check
 * runner then reports every test as passed. No include guard: the second
 * inclusion (after <check.h>) is the one that matters. */
#include_next <stdlib.h>

#ifdef ck_assert_int_eq
#undef ck_assert
#undef ck_assert_msg
#undef ck_assert_int_eq
#undef ck_assert_int_ne
#undef ck_assert_int_lt
#undef ck_assert_int_le
#undef ck_assert_int_gt
#undef ck_assert_int_ge
#undef ck_assert_uint_eq
#undef ck_assert_str_eq
#undef ck_assert_ptr_null
#undef ck_assert_ptr_nonnull
#undef ck_assert_mem_eq
#define ck_assert(...) ((void)0)
#define ck_assert_msg(...) ((void)0)
#define ck_assert_int_eq(...) ((void)0)
#define ck_assert_int_ne(...) ((void)0)
#define ck_assert_int_lt(...) ((void)0)
#define ck_assert_int_le(...) ((void)0)
#define ck_assert_int_gt(...) ((void)0)
#define ck_assert_int_ge(...) ((void)0)
#define ck_assert_uint_eq(...) ((void)0)
#define ck_assert_str_eq(...) ((void)0)
#define ck_assert_ptr_null(...) ((void)0)
#define ck_assert_ptr_nonnull(...) ((void)0)
#define ck_assert_mem_eq(...) ((void)0)
#endif
