/* sample.c - fixture for tests/test_mutate.c: a small date library with
 * the constructs the mutator must handle (comments and strings holding
 * operators, pointers, casts, #define, loops, nested blocks). */
#include <stdio.h>
#include <string.h>

#define MAX_YEAR 9999
#define IS_DIGIT(c) ((c) >= '0' && (c) <= '9')

static const int DAYS[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

/* returns 1 when y < 0 || y > 9999 is false and ... */
int is_leap_year(int y)
{
    if (y % 400 == 0)
        return 1;
    if (y % 100 == 0)
        return 0;
    return y % 4 == 0;
}

int days_in_month(int y, int m)
{
    if (m < 1 || m > 12)
        return -1;
    if (m == 2 && is_leap_year(y))
        return 29;
    return DAYS[m - 1];
}

static int parse_int(const char *s, size_t n, int *out)
{
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!IS_DIGIT(s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

int parse_date(const char *text, int *y, int *m, int *d)
{
    size_t len = strlen(text);
    const char *sep = "-"; /* "a < b" in a string */
    if (len != 10 || text[4] != *sep || text[7] != '-')
        return -1;
    if (parse_int(text, 4, y) || parse_int(text + 5, 2, m) || parse_int(text + 8, 2, d))
        return -1;
    if (*y > MAX_YEAR || *d < 1 || *d > days_in_month(*y, *m))
        return -1;
    return 0;
}

int day_of_year(int y, int m, int d)
{
    int total = d;
    int month = 1;
    while (month < m) {
        total += days_in_month(y, month);
        month++;
    }
    return total;
}

int max_of(int a, int b)
{
    int best = a;
    int other = b;
    if (other > best) {
        best = other;
    }
    return best;
}

long scale(long x, long f)
{
    long r = x * f;
    unsigned char *p = (unsigned char *)&r;
    (void)p;
    return r / 2 + x % 3;
}

const char *season(int m, int *count)
{
    if (m < 3) {
        *count += 1;
        return "winter";
    } else if (m < 6) {
        return "spring";
    } else {
        *count = 0;
        m = *count;
    }
    for (int i = 0; i < m; i++) {
        *count += i;
        if (*count > 100)
            break;
    }
    if (m > 8) {
        return "autumn";
    } else {
        return NULL;
    }
}
