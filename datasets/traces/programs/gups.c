/* gups.c: random read-modify-write updates over a large table (a small GUPS, the HPC Challenge
 * RandomAccess kernel's pattern). The table is calloc'ed, so only the pages an update touches are
 * ever mapped: the footprint is the pages the random updates land on.
 * Usage: gups [table MiB, default 256] [updates, default 60000]
 * Part of pagesim's datasets/traces (see record.sh there for how it was traced). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? strtoul(argv[1], 0, 10) : 256;
    long updates = argc > 2 ? strtol(argv[2], 0, 10) : 60000;
    size_t n = (mib << 20) / sizeof(uint64_t);
    uint64_t *table = calloc(n, sizeof(uint64_t));
    if (!table) { perror("calloc"); return 1; }
    uint64_t x = 88172645463325252ull; /* xorshift64 (Marsaglia 2003) */
    for (long i = 0; i < updates; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        table[x % n] ^= x;
    }
    uint64_t sum = 0;
    for (long i = 0; i < 64; i++) sum += table[(i * 4099) % n];
    printf("%llu\n", (unsigned long long)sum);
    free(table);
    return 0;
}
