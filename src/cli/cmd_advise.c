/* cli/cmd_advise.c: `gpuprof advise PATH...`: runs the advice rules on each
 * trace and prints the advice by priority, as text or JSON. */
#include "analysis/advise.h"
#include "cli/cli.h"
#include "core/error.h"
#include "core/sbuf.h"
#include "core/table.h"
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuprof advise [options] TRACE...\n"
               "  TRACE: .json / .json.gz trace, or a folder of them (each advised separately)\n"
               "  --set RULE.PARAM=VALUE  override a rule's threshold (repeatable)\n"
               "  --only RULE[,RULE...]   run only these rules\n"
               "  --disable RULE[,RULE...] skip these rules\n"
               "  --min-priority P        show advice of priority P or higher\n"
               "                          (critical, high, medium, low; default low)\n"
               "  --list-rules            print the rules with their thresholds and exit\n"
               "  --json                  machine-readable output (times in ns)\n");
}

static void list_rules(void)
{
    size_t n;
    const gp_adv_rule *r = gp_adv_rules(&n);
    for (size_t i = 0; i < n; i++) {
        printf("%s [%s]: %s\n", r[i].id, r[i].type, r[i].title);
        for (int k = 0; k < GP_ADV_MAX_PARAMS && r[i].params[k].name; k++)
            printf("    %s.%s = %g  (%s)\n", r[i].id, r[i].params[k].name, r[i].params[k].def,
                   r[i].params[k].help);
        printf("    hint: %s\n", r[i].hint);
    }
}

static int parse_rule_list(const char *arg, unsigned char *mark, unsigned char val)
{
    char *dup = gp_xstrdup(arg), *save = NULL;
    for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int r = gp_adv_rule_find(tok);
        if (r < 0) {
            fprintf(stderr, "gpuprof: unknown rule '%s' (see --list-rules)\n", tok);
            free(dup);
            return -1;
        }
        mark[r] = val;
    }
    free(dup);
    return 0;
}

static int parse_set(const char *arg, double (*values)[GP_ADV_MAX_PARAMS],
                     unsigned char (*set)[GP_ADV_MAX_PARAMS])
{
    const char *dot = strchr(arg, '.'), *eq = strchr(arg, '=');
    if (!dot || !eq || eq < dot) {
        fprintf(stderr, "gpuprof: --set expects RULE.PARAM=VALUE, got '%s'\n", arg);
        return -1;
    }
    char rule[64], param[64];
    snprintf(rule, sizeof rule, "%.*s", (int)(dot - arg), arg);
    snprintf(param, sizeof param, "%.*s", (int)(eq - dot - 1), dot + 1);
    int r = gp_adv_rule_find(rule);
    if (r < 0) {
        fprintf(stderr, "gpuprof: unknown rule '%s' (see --list-rules)\n", rule);
        return -1;
    }
    size_t nr;
    const gp_adv_rule *rules = gp_adv_rules(&nr);
    int p = gp_adv_param_find(&rules[r], param);
    if (p < 0) {
        fprintf(stderr, "gpuprof: rule '%s' has no parameter '%s' (see --list-rules)\n", rule,
                param);
        return -1;
    }
    char *end;
    errno = 0;
    double v = strtod(eq + 1, &end);
    if (errno || end == eq + 1 || *end || !isfinite(v) || v < 0) {
        fprintf(stderr, "gpuprof: --set %s.%s expects a non-negative number, got '%s'\n", rule,
                param, eq + 1);
        return -1;
    }
    values[r][p] = v;
    set[r][p] = 1;
    return 0;
}

static void print_text(const gp_trace *t, const gp_advice_list *l, gp_priority minp)
{
    char d[64];
    printf("== %s", gp_trace_s(t, t->meta.source));
    if (t->meta.rank != GP_NONE) printf(" (rank %d)", t->meta.rank);
    printf("\ntraced span %s\n", gp_fmt_dur_auto(d, sizeof d, (double)l->span_ns));
    size_t shown = 0;
    for (size_t i = 0; i < l->n; i++) {
        const gp_advice *a = &l->v[i];
        if (a->priority > minp) continue;
        shown++;
        printf("\n[%s] %s (%s)\n", gp_priority_name(a->priority), a->rule->id, a->rule->type);
        printf("  found:    %s\n", a->finding);
        if (a->time_ns != GP_NONE)
            printf("  time:     %s (%.1f%% of the span)\n",
                   gp_fmt_dur_auto(d, sizeof d, (double)a->time_ns),
                   l->span_ns > 0 ? 100.0 * (double)a->time_ns / (double)l->span_ns : 0.0);
        printf("  estimate: %s\n", a->estimate);
        printf("  hint:     %s\n", a->rule->hint);
        for (size_t k = 0; k < a->nev; k++) {
            const gp_adv_evidence *e = &a->ev[k];
            printf("    - %.100s: %llu x", e->name, (unsigned long long)e->count);
            if (e->time_ns != GP_NONE)
                printf(", %s", gp_fmt_dur_auto(d, sizeof d, (double)e->time_ns));
            if (!isnan(e->value)) printf(", value %g", e->value);
            printf("\n");
        }
    }
    if (!shown)
        printf("\nno advice: no rule fired%s\n", minp < GP_PRIO_LOW ? " at this priority" : "");
}

static void print_json(gp_sbuf *b, const gp_trace *t, const gp_advice_list *l, gp_priority minp)
{
    gp_sbuf_putc(b, '{');
    gp_json_key(b, "file", 0);
    gp_json_str(b, gp_trace_s(t, t->meta.source));
    gp_json_key(b, "rank", 1);
    if (t->meta.rank == GP_NONE)
        gp_sbuf_puts(b, "null");
    else
        gp_json_int(b, t->meta.rank);
    gp_json_key(b, "span_ns", 1);
    gp_json_int(b, l->span_ns);
    gp_json_key(b, "advice", 1);
    gp_sbuf_putc(b, '[');
    int first = 1;
    for (size_t i = 0; i < l->n; i++) {
        const gp_advice *a = &l->v[i];
        if (a->priority > minp) continue;
        if (!first) gp_sbuf_putc(b, ',');
        first = 0;
        gp_sbuf_putc(b, '{');
        gp_json_key(b, "id", 0);
        gp_json_str(b, a->rule->id);
        gp_json_key(b, "type", 1);
        gp_json_str(b, a->rule->type);
        gp_json_key(b, "priority", 1);
        gp_json_str(b, gp_priority_name(a->priority));
        gp_json_key(b, "finding", 1);
        gp_json_str(b, a->finding);
        gp_json_key(b, "time_ns", 1);
        if (a->time_ns == GP_NONE)
            gp_sbuf_puts(b, "null");
        else
            gp_json_int(b, a->time_ns);
        gp_json_key(b, "estimated_saving_ns", 1);
        if (a->saving_ns == GP_NONE)
            gp_sbuf_puts(b, "null");
        else
            gp_json_int(b, a->saving_ns);
        gp_json_key(b, "estimated_saving_pct", 1);
        gp_json_num(b, a->saving_pct);
        gp_json_key(b, "estimate", 1);
        gp_json_str(b, a->estimate);
        gp_json_key(b, "hint", 1);
        gp_json_str(b, a->rule->hint);
        gp_json_key(b, "evidence", 1);
        gp_sbuf_putc(b, '[');
        for (size_t k = 0; k < a->nev; k++) {
            const gp_adv_evidence *e = &a->ev[k];
            if (k) gp_sbuf_putc(b, ',');
            gp_sbuf_putc(b, '{');
            gp_json_key(b, "name", 0);
            gp_json_str(b, e->name);
            gp_json_key(b, "count", 1);
            gp_json_int(b, (int64_t)e->count);
            gp_json_key(b, "time_ns", 1);
            if (e->time_ns == GP_NONE)
                gp_sbuf_puts(b, "null");
            else
                gp_json_int(b, e->time_ns);
            gp_json_key(b, "value", 1);
            gp_json_num(b, e->value);
            gp_sbuf_putc(b, '}');
        }
        gp_sbuf_puts(b, "]}");
    }
    gp_sbuf_puts(b, "]}");
}

int gp_cmd_advise(int argc, char **argv)
{
    size_t nr;
    gp_adv_rules(&nr);
    double(*values)[GP_ADV_MAX_PARAMS] = gp_xcalloc(nr, sizeof *values);
    unsigned char(*set)[GP_ADV_MAX_PARAMS] = gp_xcalloc(nr, sizeof *set);
    unsigned char *enabled = gp_xmalloc(nr);
    memset(enabled, 1, nr);
    int json = 0, rc = 2, only = 0;
    gp_priority minp = GP_PRIO_LOW;
    static const struct option lo[] = {
        {"set", required_argument, 0, 's'},     {"only", required_argument, 0, 'o'},
        {"disable", required_argument, 0, 'd'}, {"min-priority", required_argument, 0, 'p'},
        {"list-rules", no_argument, 0, 'l'},    {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "jh", lo, NULL)) != -1) {
        switch (c) {
        case 's':
            if (parse_set(optarg, values, set)) goto out;
            break;
        case 'o':
            if (!only) memset(enabled, 0, nr);
            only = 1;
            if (parse_rule_list(optarg, enabled, 1)) goto out;
            break;
        case 'd':
            if (parse_rule_list(optarg, enabled, 0)) goto out;
            break;
        case 'p': {
            int k = 0;
            while (k <= GP_PRIO_LOW && strcmp(optarg, gp_priority_name((gp_priority)k))) k++;
            if (k > GP_PRIO_LOW) {
                fprintf(stderr, "gpuprof: --min-priority expects critical, high, medium or low\n");
                goto out;
            }
            minp = (gp_priority)k;
            break;
        }
        case 'l':
            list_rules();
            rc = 0;
            goto out;
        case 'j':
            json = 1;
            break;
        case 'h':
            usage(stdout);
            rc = 0;
            goto out;
        default:
            usage(stderr);
            goto out;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        goto out;
    }
    gp_trace **traces;
    size_t n;
    if ((rc = gp_cli_load_traces(argv + optind, argc - optind, &traces, &n))) goto out;
    gp_advise_opts ao = {(const double(*)[GP_ADV_MAX_PARAMS])values,
                         (const unsigned char(*)[GP_ADV_MAX_PARAMS])set, enabled};
    gp_sbuf b = {0};
    if (json) {
        gp_sbuf_puts(&b, "{\"gpuprof_version\":");
        gp_json_str(&b, gp_version());
        gp_sbuf_puts(&b, ",\"traces\":[");
    }
    for (size_t i = 0; i < n; i++) {
        gp_advice_list l;
        if (gp_advise(traces[i], &ao, &l)) {
            fprintf(stderr, "gpuprof: out of memory\n");
            rc = 3;
            break;
        }
        if (json) {
            if (i) gp_sbuf_putc(&b, ',');
            print_json(&b, traces[i], &l, minp);
        } else {
            if (i) putchar('\n');
            print_text(traces[i], &l, minp);
        }
        gp_advice_list_free(&l);
    }
    if (json) {
        gp_sbuf_puts(&b, "]}\n");
        gp_sbuf_write(&b, stdout);
    }
    gp_sbuf_free(&b);
    gp_cli_free_traces(traces, n);
    if (fflush(stdout) != 0 && !rc) rc = 1;
out:
    free(values);
    free(set);
    free(enabled);
    return rc;
}
