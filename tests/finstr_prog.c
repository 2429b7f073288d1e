/* tests/finstr_prog.c: built with -finstrument-functions and linked with
 * libgpuprof_finstr: checks that every instrumented call became a range in
 * gp_default(), named by dladdr, with the right counts and nesting. */
#include <gpuprof/gpuprof.h>
#include <stdio.h>
#include <string.h>

int fib(int n);
void leaf(void);
void quiet(void);

int fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

void leaf(void) {}

void quiet(void)
{
    leaf();
}

int main(void)
{
    int r = fib(10); /* 177 calls */
    for (int i = 0; i < 5; i++) leaf();
    gp_finstr_enable(0);
    quiet(); /* not recorded (nor the leaf call inside) */
    gp_finstr_enable(1);
    gp_summary_row *rows;
    size_t n;
    if (r != 55 || gp_summary_rows(gp_default(), &rows, &n) != 0) return 1;
    long fibc = -1, leafc = -1, quietc = -1;
    for (size_t i = 0; i < n; i++) {
        printf("%s: %llu calls, total %lld ns, self %lld ns\n", rows[i].name,
               (unsigned long long)rows[i].count, (long long)rows[i].total_ns,
               (long long)rows[i].self_ns);
        if (!strcmp(rows[i].name, "fib")) fibc = (long)rows[i].count;
        if (!strcmp(rows[i].name, "leaf")) leafc = (long)rows[i].count;
        if (!strcmp(rows[i].name, "quiet")) quietc = (long)rows[i].count;
    }
    gp_summary_rows_free(rows, n);
    /* main is still open, so it has no row */
    if (fibc != 177 || leafc != 5 || quietc != -1) {
        fprintf(stderr, "finstr: expected fib 177, leaf 5, quiet absent; got %ld %ld %ld\n", fibc,
                leafc, quietc);
        return 1;
    }
    printf("finstr: ok\n");
    return 0;
}
