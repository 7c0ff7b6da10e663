/* test_ringbuf.c - TAP tests for the ring buffer. */
#include "tap.h"

#include "ringbuf.h"

static uint8_t storage[8];
static ringbuf rb;

static void test_init_empty(void)
{
    rb_init(&rb, storage, sizeof storage);
    CHECK(rb_is_empty(&rb));
    CHECK(!rb_is_full(&rb));
    CHECK_EQ(rb_len(&rb), 0);
    CHECK_EQ(rb_space(&rb), 8);
    uint8_t b;
    CHECK_EQ(rb_pop(&rb, &b), -1);
    CHECK_EQ(rb_peek(&rb, 0, &b), -1);
}

static void test_push_pop_fifo(void)
{
    rb_init(&rb, storage, sizeof storage);
    for (int i = 1; i <= 5; i++)
        CHECK_EQ(rb_push(&rb, (uint8_t)i), 0);
    CHECK_EQ(rb_len(&rb), 5);
    for (int i = 1; i <= 5; i++) {
        uint8_t b = 0;
        CHECK_EQ(rb_pop(&rb, &b), 0);
        CHECK_EQ(b, i);
    }
    CHECK(rb_is_empty(&rb));
}

static void test_fill_to_capacity(void)
{
    rb_init(&rb, storage, sizeof storage);
    for (int i = 0; i < 8; i++)
        CHECK_EQ(rb_push(&rb, (uint8_t)i), 0);
    CHECK(rb_is_full(&rb));
    CHECK_EQ(rb_space(&rb), 0);
    CHECK_EQ(rb_push(&rb, 99), -1);
    uint8_t b;
    CHECK_EQ(rb_peek(&rb, 7, &b), 0);
    CHECK_EQ(b, 7);
}

static void test_wraparound(void)
{
    rb_init(&rb, storage, sizeof storage);
    uint8_t b;
    /* move head to the middle, then fill across the end of storage */
    for (int i = 0; i < 6; i++)
        rb_push(&rb, (uint8_t)i);
    for (int i = 0; i < 6; i++)
        rb_pop(&rb, &b);
    for (int i = 10; i < 18; i++)
        CHECK_EQ(rb_push(&rb, (uint8_t)i), 0);
    CHECK(rb_is_full(&rb));
    for (int i = 10; i < 18; i++) {
        CHECK_EQ(rb_pop(&rb, &b), 0);
        CHECK_EQ(b, i);
    }
}

static void test_peek(void)
{
    rb_init(&rb, storage, sizeof storage);
    uint8_t b;
    for (int i = 0; i < 7; i++)
        rb_push(&rb, (uint8_t)(i * 3));
    rb_pop(&rb, &b);
    rb_pop(&rb, &b);
    rb_push(&rb, 100);
    rb_push(&rb, 101);
    CHECK_EQ(rb_peek(&rb, 0, &b), 0);
    CHECK_EQ(b, 6);
    CHECK_EQ(rb_peek(&rb, 5, &b), 0);
    CHECK_EQ(b, 100);
    CHECK_EQ(rb_peek(&rb, 6, &b), 0);
    CHECK_EQ(b, 101);
    CHECK_EQ(rb_peek(&rb, 7, &b), -1);
}

static void test_push_overwrite(void)
{
    rb_init(&rb, storage, sizeof storage);
    for (int i = 0; i < 8; i++)
        CHECK(!rb_push_overwrite(&rb, (uint8_t)i));
    CHECK(rb_push_overwrite(&rb, 8));
    CHECK(rb_push_overwrite(&rb, 9));
    CHECK_EQ(rb_len(&rb), 8);
    uint8_t b;
    rb_pop(&rb, &b);
    CHECK_EQ(b, 2);
}

static void test_bulk_write_read(void)
{
    rb_init(&rb, storage, sizeof storage);
    const uint8_t data[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
    CHECK_EQ(rb_write(&rb, data, 5), 5);
    uint8_t out[16] = { 0 };
    CHECK_EQ(rb_read(&rb, out, 3), 3);
    CHECK_MEM(out, data, 3);
    /* head is 3, len 2: this write wraps around the end of storage */
    CHECK_EQ(rb_write(&rb, data + 5, 5), 5);
    CHECK(rb_is_full(&rb) == false);
    CHECK_EQ(rb_len(&rb), 7);
    CHECK_EQ(rb_read(&rb, out, 16), 7);
    CHECK_MEM(out, data + 3, 7);
    CHECK(rb_is_empty(&rb));
}

static void test_write_truncates_when_full(void)
{
    rb_init(&rb, storage, sizeof storage);
    const uint8_t data[12] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 };
    CHECK_EQ(rb_write(&rb, data, 12), 8);
    CHECK(rb_is_full(&rb));
    CHECK_EQ(rb_write(&rb, data, 1), 0);
    uint8_t out[8];
    CHECK_EQ(rb_read(&rb, out, 8), 8);
    CHECK_MEM(out, data, 8);
}

static void test_copy_out_wrapped(void)
{
    rb_init(&rb, storage, sizeof storage);
    const uint8_t data[] = { 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h' };
    uint8_t out[8] = { 0 };
    rb_write(&rb, data, 6);
    rb_discard(&rb, 5);
    rb_write(&rb, data, 6); /* "f" then "abcdef", wrapping */
    CHECK_EQ(rb_copy_out(&rb, out, 8), 7);
    CHECK_MEM(out, "fabcdef", 7);
    CHECK_EQ(rb_len(&rb), 7);
    CHECK_EQ(rb_copy_out(&rb, out, 2), 2);
    CHECK_MEM(out, "fa", 2);
}

static void test_discard(void)
{
    rb_init(&rb, storage, sizeof storage);
    const uint8_t data[] = { 1, 2, 3, 4, 5 };
    rb_write(&rb, data, 5);
    CHECK_EQ(rb_discard(&rb, 2), 2);
    uint8_t b;
    rb_peek(&rb, 0, &b);
    CHECK_EQ(b, 3);
    CHECK_EQ(rb_discard(&rb, 10), 3);
    CHECK(rb_is_empty(&rb));
    CHECK_EQ(rb_discard(&rb, 1), 0);
}

static void test_find(void)
{
    rb_init(&rb, storage, sizeof storage);
    const uint8_t data[] = { 5, 6, 7, 8, 9, 10 };
    rb_write(&rb, data, 6);
    rb_discard(&rb, 4);
    rb_write(&rb, data, 5); /* 9 10 5 6 7 8 9, wrapped */
    CHECK_EQ(rb_find(&rb, 9), 0);
    CHECK_EQ(rb_find(&rb, 5), 2);
    CHECK_EQ(rb_find(&rb, 8), 5);
    CHECK_EQ(rb_find(&rb, 42), -1);
}

static void test_read_line(void)
{
    rb_init(&rb, storage, sizeof storage);
    char line[8];
    rb_write(&rb, (const uint8_t *)"ab\ncd", 5);
    CHECK_EQ(rb_read_line(&rb, line, sizeof line), 3);
    CHECK(strcmp(line, "ab\n") == 0);
    CHECK_EQ(rb_read_line(&rb, line, sizeof line), 0);
    rb_write(&rb, (const uint8_t *)"efg\n", 4); /* wraps */
    CHECK_EQ(rb_read_line(&rb, line, 4), -1);
    CHECK_EQ(rb_len(&rb), 6);
    CHECK_EQ(rb_read_line(&rb, line, sizeof line), 6);
    CHECK(strcmp(line, "cdefg\n") == 0);
}

static void test_clear(void)
{
    rb_init(&rb, storage, sizeof storage);
    rb_write(&rb, (const uint8_t *)"xyz", 3);
    rb_clear(&rb);
    CHECK(rb_is_empty(&rb));
    CHECK_EQ(rb_space(&rb), 8);
}

int main(void)
{
    static const tap_test tests[] = {
        TAP_TEST(test_init_empty),
        TAP_TEST(test_push_pop_fifo),
        TAP_TEST(test_fill_to_capacity),
        TAP_TEST(test_wraparound),
        TAP_TEST(test_peek),
        TAP_TEST(test_push_overwrite),
        TAP_TEST(test_bulk_write_read),
        TAP_TEST(test_write_truncates_when_full),
        TAP_TEST(test_copy_out_wrapped),
        TAP_TEST(test_discard),
        TAP_TEST(test_find),
        TAP_TEST(test_read_line),
        TAP_TEST(test_clear),
    };
    return tap_run(tests, (int)(sizeof tests / sizeof tests[0]));
}
