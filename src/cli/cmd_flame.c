/* cli/cmd_flame.c: `gpuprof flame PATH -o OUT`: flame graphs of a trace's
 * CPU stacks with GPU work under its launch, or of folded stacks, as
 * self-contained HTML, folded lines, speedscope JSON or nested JSON. */
#include "analysis/calltree.h"
#include "cli/cli.h"
#include "core/error.h"
#include "core/sbuf.h"
#include "core/table.h"
#include "render/flame.h"
#include "render/html.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuprof flame [options] PATH... -o OUT\n"
               "  PATH: .json/.json.gz trace (or a folder of rank files), or a folded-stacks file\n"
               "        (\"frame;frame;... COUNT\" lines from perf/py-spy/stackcollapse)\n"
               "  -o, --output OUT        OUT by extension: .html (interactive flame graph),\n"
               "                          .folded (flamegraph.pl lines), .speedscope.json, .json\n"
               "  --json                  nested flame JSON (to stdout unless -o names a .json)\n"
               "  --min-duration D        fold frames whose total is below D into their parent\n"
               "                          (D: 150us, 2ms, 1s, 500ns; plain number: ns or samples)\n"
               "  --max-depth N           fold frames deeper than N (thread frames are depth 1)\n"
               "  --group-small-kernels D merge GPU frames whose total is below D per parent\n"
               "  --title TEXT            page title (HTML)\n" GP_CLI_REDACT_USAGE);
}

/* A folded-stacks file: a regular file that does not start like JSON or gzip. */
static int is_folded(const char *path, gp_err *err)
{
    struct stat st;
    /* not a plain file (a folder, a "store.db:ID" run): the trace loader decides */
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    FILE *f = fopen(path, "rb");
    if (!f) return gp_err_set(err, GP_EIO, "%s: %s", path, strerror(errno));
    char head[16] = {0};
    size_t got = fread(head, 1, sizeof head, f);
    if (got == sizeof head && !memcmp(head, "SQLite format 3", 16)) {
        fclose(f);
        return 0; /* a recorded-run store */
    }
    /* a UTF-8 byte order mark is skipped, as the JSON reader skips it */
    size_t skip = got >= 3 && !memcmp(head, "\xef\xbb\xbf", 3) ? 3 : 0;
    fseek(f, (long)skip, SEEK_SET);
    int c;
    do c = fgetc(f);
    while (c == ' ' || c == '\t' || c == '\n' || c == '\r');
    fclose(f);
    if (c == EOF) return 1; /* empty: read as folded stacks, refused there */
    return !(c == '{' || c == '[' || c == 0x1f);
}

static int read_all(const char *path, char **data, size_t *n, gp_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return gp_err_set(err, GP_EIO, "%s: %s", path, strerror(errno));
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fclose(f);
            return gp_err_set(err, GP_ENOMEM, "%s: out of memory", path);
        }
        size_t k = fread(buf + len, 1, cap - len, f);
        len += k;
        if (len < cap) break;
        char *nb = realloc(buf, cap * 2);
        if (!nb) free(buf);
        buf = nb;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return gp_err_set(err, GP_EIO, "%s: read failed", path);
    }
    *data = buf;
    *n = len;
    return 0;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

int gp_cmd_flame(int argc, char **argv)
{
    const char *out = NULL, *title = NULL;
    long long min_dur = 0, group = 0;
    long max_depth = 0;
    int json = 0;
    static const struct option lo[] = {{"output", required_argument, 0, 'o'},
                                       {"json", no_argument, 0, 'j'},
                                       {"min-duration", required_argument, 0, 'm'},
                                       {"max-depth", required_argument, 0, 'd'},
                                       {"group-small-kernels", required_argument, 0, 'g'},
                                       {"title", required_argument, 0, 't'},
                                       GP_CLI_REDACT_OPTIONS,
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 'j':
            json = 1;
            break;
        case 'm':
            if ((min_dur = gp_cli_parse_dur("--min-duration", optarg)) < 0) return 2;
            break;
        case 'd':
            if ((max_depth = gp_cli_parse_count("--max-depth", optarg)) < 0) return 2;
            break;
        case 'g':
            if ((group = gp_cli_parse_dur("--group-small-kernels", optarg)) < 0) return 2;
            break;
        case 't':
            title = optarg;
            break;
            GP_CLI_REDACT_CASES;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind >= argc || (!out && !json)) {
        /* say what is missing before the usage */
        if (optind >= argc)
            fprintf(stderr, "gpuprof flame: no input named\n");
        else
            fprintf(stderr, "gpuprof flame: -o OUT is missing (the file to write)\n");
        usage(stderr);
        return 2;
    }
    enum { O_HTML, O_FOLDED, O_SPEEDSCOPE, O_JSON } kind = O_JSON;
    if (out && !json) {
        if (gp_path_has_suffix(out, ".html") || gp_path_has_suffix(out, ".htm"))
            kind = O_HTML;
        else if (gp_path_has_suffix(out, ".folded") || gp_path_has_suffix(out, ".txt"))
            kind = O_FOLDED;
        else if (gp_path_has_suffix(out, ".speedscope.json"))
            kind = O_SPEEDSCOPE;
        else if (gp_path_has_suffix(out, ".json"))
            kind = O_JSON;
        else {
            fprintf(stderr,
                    "gpuprof: %s: unknown output type (use .html, .folded, "
                    ".speedscope.json or .json)\n",
                    out);
            return 2;
        }
    }
    if (!out) out = "-";
    gp_err err = {0};
    gp_cli_redact_allow();
    int folded = argc - optind == 1 ? is_folded(argv[optind], &err) : 0;
    if (folded < 0) {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        return 2;
    }
    gp_ftree tree;
    gp_trace **traces = NULL;
    size_t ntraces = 0;
    int rc = 0;
    if (folded) {
        if (gp_ftree_init(&tree, "samples")) {
            fprintf(stderr, "gpuprof: out of memory\n");
            return 3;
        }
        char *data = NULL;
        size_t n = 0;
        /* read, not mmap: a file truncated while mapped would kill the
         * process with SIGBUS instead of giving an error */
        int e = read_all(argv[optind], &data, &n, &err);
        size_t bom = !e && n >= 3 && !memcmp(data, "\xef\xbb\xbf", 3) ? 3 : 0;
        if (!e) e = gp_ftree_add_folded(&tree, data + bom, n - bom, argv[optind], &err);
        if (!e && tree.nodes.n <= 1) /* no stack: an empty input is an error everywhere */
            e = gp_err_set(&err, GP_EPARSE, "%s: no stacks (empty input)", argv[optind]);
        free(data);
        if (e) {
            fprintf(stderr, "gpuprof: %s\n", err.msg);
            gp_ftree_fini(&tree);
            return e == GP_ENOMEM ? 3 : 2;
        }
    } else {
        rc = gp_cli_load_traces(argv + optind, argc - optind, &traces, &ntraces);
        if (rc) return rc;
        if (gp_ftree_build_traces(&tree, traces, ntraces)) {
            fprintf(stderr, "gpuprof: out of memory\n");
            gp_cli_free_traces(traces, ntraces);
            return 3;
        }
    }
    if (folded) gp_ftree_finish(&tree);
    if (folded && gp_cli_redact_strtab(tree.names)) {
        gp_ftree_fini(&tree);
        return 3;
    }
    gp_ftree_prune_opts po = {min_dur, (uint32_t)max_depth, group};
    char note[256] = "";
    if (kind == O_HTML) gp_flame_page_limit(&tree, &po);
    gp_ftree prt, *use;
    if (gp_ftree_select(&tree, &po, &prt, &use)) {
        fprintf(stderr, "gpuprof: out of memory\n");
        rc = 3;
        goto done;
    }
    int pruned = use == &prt;
    if (kind == O_HTML) gp_flame_page_note(&tree, use, &po, min_dur, note, sizeof note);
    gp_sbuf b = {0};
    switch (kind) {
    case O_HTML: {
        char t[512];
        snprintf(t, sizeof t, "Flame graph: %s", base_name(argv[optind]));
        gp_flame_html(use, title ? title : t, note[0] ? note : NULL, &b);
        break;
    }
    case O_FOLDED:
        gp_flame_folded(use, &b);
        break;
    case O_JSON:
        gp_flame_json(use, &b);
        break;
    case O_SPEEDSCOPE:
        if (folded || min_dur || max_depth || group)
            rc = gp_speedscope_tree(use, base_name(argv[optind]), &b);
        else
            rc = gp_speedscope_trace((const gp_trace *const *)traces, ntraces, &b);
        if (rc) {
            fprintf(stderr, "gpuprof: out of memory\n");
            rc = 3;
        }
        break;
    }
    if (!rc && gp_write_file(out, &b, &err)) {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        rc = 1;
    }
    if (!rc && strcmp(out, "-"))
        fprintf(stderr, "gpuprof: wrote %s (%zu frames, total %lld %s)\n", out, use->nodes.n - 1,
                (long long)use->nodes.v[0].total, use->unit);
    gp_sbuf_free(&b);
    if (pruned) gp_ftree_fini(&prt);
done:
    gp_ftree_fini(&tree);
    if (traces) gp_cli_free_traces(traces, ntraces);
    return rc;
}
