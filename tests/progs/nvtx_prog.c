/* tests/progs/nvtx_prog.c: an ordinary program annotated with NVTX v3
 * (header-only; no GPU, no CUDA library): push/pop ranges, start/end ranges
 * (one ended on another thread), marks, a named domain with a registered
 * string, a thread name. t_run_nvtx.py checks what `gpuprof run --nvtx`
 * records. Usage: nvtx_prog [ITERATIONS]
 *        nvtx_prog stress THREADS PAIRS: THREADS threads (which exit before
 *          the program) each nest PAIRS names written into one reused stack
 *          buffer (same pointer, changing text) inside a literal-named range;
 *          prints the CLOCK_MONOTONIC ns before and after them
 *        nvtx_prog fork: a range open across fork, ranges in the child
 *        nvtx_prog clock N: N ranges "clock probe" 5 ms apart, each printed
 *          as "probe BEFORE AFTER" (CLOCK_MONOTONIC ns read around it)
 *        nvtx_prog domains: push/pop ranges of several domains interleaved
 *          on one thread (one stack per domain); prints the levels returned
 *        nvtx_prog wide: the wide-character (W, NVTX_MESSAGE_TYPE_UNICODE)
 *          variants, nested in ASCII ranges
 *        nvtx_prog longdom: domain range names longer than 512 bytes that
 *          differ only at their end
 *        nvtx_prog forkstart: start/end ranges started before a fork (by
 *          the forking thread and by an exited thread) and ended in the child
 *          by another thread and in the parent
 *        nvtx_prog lateexit: a thread still inside an NVTX call (reading
 *          its message, held up by a fault handler) when the program exits;
 *          it finishes the call when stdio is flushed, after the library
 *          destructors (the injection's stops the store writer)
 *        nvtx_prog atexit: a range and a mark in an exit handler registered
 *          before NVTX started (it runs after the injection's) */
#include <errno.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

static void spin_us(long us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do clock_gettime(CLOCK_MONOTONIC, &b);
    /* in ns: a microsecond difference truncated toward zero ended the spin
     * up to 1 us early whenever the nanoseconds wrapped across a second */
    while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < us * 1000L);
}

static nvtxRangeId_t cross;

static void *ender(void *arg)
{
    (void)arg;
    spin_us(200);
    nvtxRangeEnd(cross);
    return NULL;
}

static int stress_pairs;

static long long mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void *stress_worker(void *arg)
{
    long k = (long)arg;
    char buf[48];
    nvtxDomainHandle_t dom = nvtxDomainCreateA("stressdom");
    nvtxStringHandle_t reg = nvtxDomainRegisterStringA(dom, "reg");
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = reg;
    for (int i = 0; i < stress_pairs; i++) {
        snprintf(buf, sizeof buf, "dyn %ld %d", k, i % 3); /* same pointer, new text */
        nvtxRangePushA("stress outer");
        nvtxRangePushA(buf);
        if (i % 100 == 0) nvtxDomainMarkEx(dom, &a);
        nvtxRangePop();
        nvtxRangePop();
    }
    return NULL;
}

static int stress(int threads, int pairs)
{
    stress_pairs = pairs;
    pthread_t th[64];
    if (threads > 64) threads = 64;
    nvtxMarkA("stress start"); /* NVTX initialised before the threads (TSan runs) */
    printf("mono_before %lld\n", mono_ns());
    for (long k = 0; k < threads; k++) pthread_create(&th[k], NULL, stress_worker, (void *)k);
    for (int k = 0; k < threads; k++) pthread_join(th[k], NULL);
    printf("mono_after %lld\n", mono_ns());
    return 0;
}

static int forked(void)
{
    nvtxRangePushA("across fork");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 5; i++) {
            nvtxRangePushA("child range");
            spin_us(20);
            nvtxRangePop();
        }
        nvtxRangePop(); /* the range opened before the fork, ended in the child */
        exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    nvtxRangePushA("parent after fork");
    nvtxRangePop();
    nvtxRangePop();
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

static int clock_probes(int n)
{
    for (int i = 0; i < n; i++) {
        long long b = mono_ns();
        nvtxRangePushA("clock probe");
        spin_us(50);
        nvtxRangePop();
        long long a = mono_ns();
        printf("probe %lld %lld\n", b, a);
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

static nvtxEventAttributes_t attr_ascii(const char *m)
{
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = m;
    return a;
}

static int domains(void)
{
    nvtxDomainHandle_t d = nvtxDomainCreateA("D"), e = nvtxDomainCreateA("E");
    nvtxEventAttributes_t a = attr_ascii("B");
    int l[16], n = 0;
    /* A and D::B overlap: A ends first (each pop ends its own domain's range) */
    l[n++] = nvtxRangePushA("A"); /* 0 */
    spin_us(100);
    l[n++] = nvtxDomainRangePushEx(d, &a); /* 0: D's first level */
    spin_us(100);
    l[n++] = nvtxRangePushA("A2"); /* 1 */
    spin_us(100);
    l[n++] = nvtxRangePop(); /* 1: ends A2 */
    l[n++] = nvtxRangePop(); /* 0: ends A */
    spin_us(100);
    l[n++] = nvtxDomainRangePop(d);     /* 0: ends D::B */
    l[n++] = nvtxDomainRangePop(d) < 0; /* D's stack is empty */
    l[n++] = nvtxRangePop() < 0;        /* the default one too */
    /* D::outer holds E::x and D::inner, which overlap */
    a.message.ascii = "outer";
    l[n++] = nvtxDomainRangePushEx(d, &a); /* 0 */
    spin_us(100);
    a.message.ascii = "x";
    l[n++] = nvtxDomainRangePushEx(e, &a); /* 0: E's first level */
    spin_us(100);
    a.message.ascii = "inner";
    l[n++] = nvtxDomainRangePushEx(d, &a); /* 1 */
    spin_us(100);
    l[n++] = nvtxDomainRangePop(e); /* 0: ends E::x */
    spin_us(100);
    l[n++] = nvtxDomainRangePop(d); /* 1: ends D::inner */
    l[n++] = nvtxDomainRangePop(d); /* 0: ends D::outer */
    /* the NULL domain is the default one */
    a.message.ascii = "nulldom";
    l[n++] = nvtxDomainRangePushEx(NULL, &a); /* 0 */
    l[n++] = nvtxRangePop();                  /* 0: ends nulldom */
    printf("levels");
    for (int i = 0; i < n; i++) printf(" %d", l[i]);
    printf("\n");
    return 0;
}

static int wide(void)
{
    nvtxNameOsThreadW((uint32_t)syscall(SYS_gettid), L"wide thread \u00e9");
    nvtxRangePushA("outer A");
    spin_us(100);
    int lw = nvtxRangePushW(L"wide \u00e9\u4e2d\U0001F600");
    spin_us(100);
    nvtxRangePop(); /* ends the wide range */
    spin_us(100);
    nvtxRangePop(); /* ends outer A */
    nvtxEventAttributes_t a = attr_ascii(NULL);
    a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
    a.message.unicode = L"wideEx";
    nvtxRangePushA("outer B");
    spin_us(100);
    nvtxRangePushEx(&a);
    spin_us(100);
    nvtxRangePop();
    spin_us(100);
    nvtxRangePop();
    nvtxRangeEnd(nvtxRangeStartW(L"startW"));
    nvtxMarkW(L"markW");
    static const wchar_t bad[] = {L'b', 0xd800, 0x110000, (wchar_t)-1, L'!', 0};
    nvtxMarkW(bad); /* no scalar values: U+FFFD */
    wchar_t buf[16];
    for (int i = 0; i < 3; i++) { /* same buffer, new text */
        swprintf(buf, 16, L"wbuf %d", i);
        nvtxRangePushW(buf);
        nvtxRangePop();
    }
    nvtxDomainHandle_t d = nvtxDomainCreateW(L"wdom\u00fc");
    nvtxEventAttributes_t r = attr_ascii(NULL);
    r.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    r.message.registered = nvtxDomainRegisterStringW(d, L"wreg");
    nvtxDomainMarkEx(d, &r);
    a.message.unicode = L"wmsg";
    nvtxDomainRangePushEx(d, &a);
    nvtxDomainRangePop(d);
    printf("wide level %d\n", lw);
    return 0;
}

static int longdom(void)
{
    static char m[2000];
    nvtxDomainHandle_t d = nvtxDomainCreateA("dom");
    nvtxEventAttributes_t a = attr_ascii(m);
    for (int i = 0; i < 2; i++) { /* 1,000 'x' then A, then B */
        memset(m, 'x', 1000);
        m[1000] = (char)('A' + i);
        m[1001] = 0;
        nvtxDomainRangePushEx(d, &a);
        nvtxDomainRangePop(d);
    }
    nvtxEventAttributes_t r = attr_ascii(NULL);
    r.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    r.message.registered = nvtxDomainRegisterStringA(d, m);
    nvtxDomainMarkEx(d, &r);
    /* two domains whose long names differ only at the end: a track each */
    static char dn[600];
    memset(dn, 'y', 500);
    nvtxEventAttributes_t q = attr_ascii("r");
    for (int i = 0; i < 2; i++) {
        dn[500] = (char)('1' + i);
        nvtxDomainHandle_t e = nvtxDomainCreateA(dn);
        nvtxDomainRangePushEx(e, &q);
        nvtxDomainRangePop(e);
    }
    return 0;
}

static nvtxRangeId_t by_thread, by_main;

static void *fs_starter(void *arg)
{
    (void)arg;
    by_thread = nvtxRangeStartA("started by a thread");
    nvtxRangePushA("starter");
    nvtxRangePop();
    return NULL;
}

static void *fs_ender(void *arg)
{
    (void)arg;
    nvtxRangePushA("child ender");
    nvtxRangeEnd(by_thread);
    nvtxRangeEnd(by_main);
    nvtxRangePop();
    return NULL;
}

static int forkstart(void)
{
    pthread_t th;
    pthread_create(&th, NULL, fs_starter, NULL);
    pthread_join(th, NULL);
    nvtxRangePushA("main");
    nvtxRangePop();
    by_main = nvtxRangeStartA("started by main");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        nvtxRangePushA("child main");
        pthread_create(&th, NULL, fs_ender, NULL);
        pthread_join(th, NULL);
        nvtxRangePop();
        exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    nvtxRangeEnd(by_thread);
    nvtxRangeEnd(by_main);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

/* lateexit: the message lies in a page made unreadable; the fault handler
 * holds the thread inside the NVTX call (after its first check that the
 * injection records) until exit flushes the stdio streams, after the
 * library destructors: a stream of ours (fopencookie) with buffered text
 * then makes the page readable and waits for the call to finish. */
static char *late_page;
static nvtxDomainHandle_t late_dom;
static sem_t late_in, late_go, late_done;

static int late_wait(sem_t *s)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 10;
    int rc;
    while ((rc = sem_timedwait(s, &ts)) && errno == EINTR) {
    }
    return rc;
}

static void late_segv(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if ((char *)si->si_addr < late_page || (char *)si->si_addr >= late_page + 4096) {
        signal(sig, SIG_DFL);
        return;
    }
    sem_post(&late_in);
    while (sem_wait(&late_go) && errno == EINTR) {
    }
}

static void *late_thread(void *arg)
{
    (void)arg;
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = late_page;
    nvtxDomainRangePushEx(late_dom, &a);
    nvtxDomainRangePop(late_dom);
    nvtxRangePushA("after exit");
    nvtxRangePop();
    sem_post(&late_done);
    return NULL;
}

static ssize_t late_flush(void *cookie, const char *buf, size_t n)
{
    (void)cookie;
    (void)buf;
    mprotect(late_page, 4096, PROT_READ | PROT_WRITE);
    sem_post(&late_go);
    if (late_wait(&late_done) == 0) fprintf(stderr, "nvtx_prog: late call finished\n");
    return (ssize_t)n;
}

static int late_exit(void)
{
    cookie_io_functions_t io = {NULL, late_flush, NULL, NULL};
    FILE *f = fopencookie(NULL, "w", io);
    if (!f || setvbuf(f, NULL, _IOFBF, 64) || fputs("x", f) < 0) return 1;
    sem_init(&late_in, 0, 0);
    sem_init(&late_go, 0, 0);
    sem_init(&late_done, 0, 0);
    late_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (late_page == MAP_FAILED) return 1;
    strcpy(late_page, "late message");
    struct sigaction sa = {0};
    sa.sa_sigaction = late_segv;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &sa, NULL);
    late_dom = nvtxDomainCreateA("late");
    nvtxRangePushA("before exit"); /* starts the injection (and its exit handler) */
    nvtxRangePop();
    mprotect(late_page, 4096, PROT_NONE);
    pthread_t th;
    pthread_create(&th, NULL, late_thread, NULL);
    pthread_detach(th);
    if (late_wait(&late_in)) fprintf(stderr, "nvtx_prog: the NVTX call never read its message\n");
    return 0; /* exit while the thread is inside nvtxDomainRangePushEx */
}

/* atexit: an exit handler registered before NVTX started, so run after the
 * injection's own, records a range and a mark */
static void exit_ranges(void)
{
    nvtxRangePushA("in exit handler");
    nvtxMarkA("exit mark");
    nvtxRangePop();
}

static int at_exit_ranges(void)
{
    atexit(exit_ranges);
    nvtxRangePushA("in main");
    nvtxRangePop();
    return 0;
}

/* samedomain: a domain created again by name (as a second library with its
 * own NVTX would) is the same domain, with the same push/pop stack */
static int same_domain(void)
{
    nvtxDomainHandle_t a = nvtxDomainCreateA("S"), b = nvtxDomainCreateA("S");
    nvtxDomainHandle_t w = nvtxDomainCreateW(L"S"), o = nvtxDomainCreateA("T");
    printf("same %d %d %d\n", a == b, a == w, a != o);
    for (int i = 0; i < 100000; i++)
        if (nvtxDomainCreateA("S") != a) {
            printf("differs at %d\n", i);
            break;
        }
    nvtxEventAttributes_t ev = {0};
    ev.version = NVTX_VERSION;
    ev.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    ev.messageType = NVTX_MESSAGE_TYPE_ASCII;
    ev.message.ascii = "outer";
    int l0 = nvtxDomainRangePushEx(a, &ev);
    ev.message.ascii = "inner";
    int l1 = nvtxDomainRangePushEx(b, &ev);
    spin_us(2000);
    int p1 = nvtxDomainRangePop(a); /* the inner one: one stack */
    spin_us(2000);
    int p0 = nvtxDomainRangePop(w);
    int p2 = nvtxDomainRangePop(b); /* none left */
    printf("levels %d %d %d %d %d\n", l0, l1, p1, p0, p2);
    return 0;
}

/* manystart N: N start/end ranges open at once, named r0 .. rN-1 in start
 * order, ended in a pseudo-random order printed as "order i j k ..."; then
 * N more named "fifo" ended first-started first; an unknown id and a
 * second end of an ended one are ignored */
static int many_start(int n)
{
    nvtxRangeId_t *id = malloc((size_t)n * sizeof *id);
    int *perm = malloc((size_t)n * sizeof *perm);
    if (!id || !perm) return 1;
    char name[32];
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "r%d", i);
        id[i] = nvtxRangeStartA(name);
        perm[i] = i;
    }
    unsigned x = 12345;
    for (int i = n - 1; i > 0; i--) { /* Fisher-Yates with a fixed LCG */
        x = x * 1103515245u + 12345u;
        int j = (int)((x >> 8) % (unsigned)(i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    printf("order");
    for (int i = 0; i < n; i++) {
        nvtxRangeEnd(id[perm[i]]);
        printf(" %d", perm[i]);
    }
    printf("\n");
    nvtxRangeEnd(id[perm[0]]);       /* ended already */
    nvtxRangeEnd((nvtxRangeId_t)-7); /* never started */
    for (int i = 0; i < n; i++) id[i] = nvtxRangeStartA("fifo");
    for (int i = 0; i < n; i++) nvtxRangeEnd(id[i]);
    free(id);
    free(perm);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "manystart")) return many_start(atoi(argv[2]));
    if (argc > 1 && !strcmp(argv[1], "samedomain")) return same_domain();
    if (argc > 1 && !strcmp(argv[1], "atexit")) return at_exit_ranges();
    if (argc > 1 && !strcmp(argv[1], "lateexit")) return late_exit();
    if (argc > 1 && !strcmp(argv[1], "domains")) return domains();
    if (argc > 1 && !strcmp(argv[1], "wide")) return wide();
    if (argc > 1 && !strcmp(argv[1], "longdom")) return longdom();
    if (argc > 1 && !strcmp(argv[1], "forkstart")) return forkstart();
    if (argc > 1 && !strcmp(argv[1], "clock")) return clock_probes(argc > 2 ? atoi(argv[2]) : 100);
    if (argc > 1 && !strcmp(argv[1], "stress"))
        return stress(argc > 2 ? atoi(argv[2]) : 4, argc > 3 ? atoi(argv[3]) : 3000);
    if (argc > 1 && !strcmp(argv[1], "fork")) return forked();
    int iters = argc > 1 ? atoi(argv[1]) : 3;
    nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "main thread");
    nvtxDomainHandle_t dom = nvtxDomainCreateA("mylib");
    nvtxStringHandle_t reg = nvtxDomainRegisterStringA(dom, "registered step");
    for (int i = 0; i < iters; i++) {
        nvtxRangePushA("outer");
        spin_us(100);
        nvtxRangePushA("inner");
        spin_us(100);
        nvtxRangePop();
        nvtxMarkA("checkpoint");
        nvtxRangePop();
        nvtxEventAttributes_t a = {0};
        a.version = NVTX_VERSION;
        a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        a.message.registered = reg;
        nvtxDomainRangePushEx(dom, &a);
        spin_us(50);
        nvtxDomainRangePop(dom);
    }
    cross = nvtxRangeStartA("cross-thread");
    pthread_t th;
    pthread_create(&th, NULL, ender, NULL);
    pthread_join(th, NULL);
    printf("nvtx_prog: %d iterations\n", iters);
    return 0;
}
