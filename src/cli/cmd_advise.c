/* cli/cmd_advise.c: `gpuprof advise PATH...`: runs the advice rules on each
 * trace and prints the advice by priority, as text or JSON. */
#include "report/advise.h"
#include "cli/cli.h"
#include "core/error.h"
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

static int parse_rule_list(const char *arg, unsigned char *mark, unsigned char val)
{
    char msg[256];
    if (!gp_adv_parse_rules(arg, mark, val, msg, sizeof msg)) return 0;
    fprintf(stderr, "gpuprof: %s\n", msg);
    return -1;
}

static int parse_set(const char *arg, double (*values)[GP_ADV_MAX_PARAMS],
                     unsigned char (*set)[GP_ADV_MAX_PARAMS])
{
    char msg[512];
    if (!gp_adv_parse_set(arg, values, set, msg, sizeof msg)) return 0;
    fprintf(stderr, "gpuprof: %s\n", msg);
    return -1;
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
            gp_report_advise_rules_text(stdout);
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
    gp_advice_list *lists = gp_xcalloc(n, sizeof *lists);
    size_t done = 0;
    for (; done < n; done++)
        if (gp_advise(traces[done], &ao, &lists[done])) {
            fprintf(stderr, "gpuprof: out of memory\n");
            rc = 3;
            break;
        }
    if (!rc && json) {
        gp_sbuf b = {0};
        gp_report_advise_json_doc(&b, traces, lists, n, minp);
        gp_sbuf_write(&b, stdout);
        gp_sbuf_free(&b);
    } else if (!rc) {
        gp_report_advise_text_doc(stdout, traces, lists, n, minp);
    }
    for (size_t i = 0; i < done; i++) gp_advice_list_free(&lists[i]);
    free(lists);
    gp_cli_free_traces(traces, n);
    if (fflush(stdout) != 0 && !rc) rc = 1;
out:
    free(values);
    free(set);
    free(enabled);
    return rc;
}
