/* stream.c: the STREAM triad a[i] = b[i] + s * c[i] over three arrays, a few passes: sequential
 * streams through memory (McCalpin's STREAM benchmark pattern, our own code).
 * Usage: stream [elements per array, default 262144 (2 MiB of doubles)] [passes, default 2]
 * Part of pagesim's datasets/traces (see record.sh there for how it was traced). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? strtol(argv[1], 0, 10) : 262144;
    int passes = argc > 2 ? atoi(argv[2]) : 2;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    if (!a || !b || !c) { perror("malloc"); return 1; }
    for (long i = 0; i < n; i++) { b[i] = 1.0; c[i] = 2.0; }
    for (int p = 0; p < passes; p++)
        for (long i = 0; i < n; i++) a[i] = b[i] + 3.0 * c[i];
    printf("%g\n", a[n / 2]);
    free(a); free(b); free(c);
    return 0;
}
