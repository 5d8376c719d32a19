/* chase.c: follow a linked list whose nodes lie in random order in a large pool (a hash chain or
 * tree walk's pattern): every hop is a dependent load to an unpredictable page.
 * Usage: chase [nodes, default 32768] [node bytes, default 512] [hops, default 100000]
 * Part of pagesim's datasets/traces (see record.sh there for how it was traced). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct node { struct node *next; uint64_t payload; };

int main(int argc, char **argv) {
    long n = argc > 1 ? strtol(argv[1], 0, 10) : 32768;
    long bytes = argc > 2 ? strtol(argv[2], 0, 10) : 512;
    long hops = argc > 3 ? strtol(argv[3], 0, 10) : 100000;
    char *pool = malloc(n * bytes);
    uint32_t *order = malloc(n * sizeof *order);
    if (!pool || !order || bytes < (long)sizeof(struct node)) { fprintf(stderr, "bad size\n"); return 1; }
    uint64_t x = 2463534242ull; /* xorshift64 */
    for (long i = 0; i < n; i++) order[i] = i;
    for (long i = n - 1; i > 0; i--) { /* Fisher-Yates shuffle */
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        long j = x % (i + 1);
        uint32_t t = order[i]; order[i] = order[j]; order[j] = t;
    }
    for (long i = 0; i < n; i++) {
        struct node *a = (struct node *)(pool + (size_t)order[i] * bytes);
        a->next = (struct node *)(pool + (size_t)order[(i + 1) % n] * bytes);
        a->payload = i;
    }
    struct node *p = (struct node *)(pool + (size_t)order[0] * bytes);
    uint64_t sum = 0;
    for (long h = 0; h < hops; h++) { sum += p->payload; p = p->next; }
    printf("%llu\n", (unsigned long long)sum);
    free(order); free(pool);
    return 0;
}
