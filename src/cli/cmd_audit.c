/* cli/cmd_audit.c: `gpuprof audit [--verify] [--json] [STORE|FILE]`: lists
 * the audit log of a store or a JSONL audit file and checks its chain. */
#include "cli/cli.h"
#include "report/audit_out.h"
#include "store/audit.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

int gp_cmd_audit(int argc, char **argv)
{
    int verify = 0, json = 0;
    static const struct option lo[] = {{"verify", no_argument, 0, 'v'},
                                       {"json", no_argument, 0, 'j'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "vjh", lo, NULL)) != -1) {
        if (c == 'v')
            verify = 1;
        else if (c == 'j')
            json = 1;
        else if (c == 'h') {
            printf("usage: gpuprof audit [--verify] [--json] [STORE|FILE]\n"
                   "  lists the audit log of a store (default gpuprof.db) or of a JSONL audit\n"
                   "  file; --verify checks the SHA-256 chain and exits 1 naming the first bad\n"
                   "  record (edited, deleted, inserted or moved). See docs/security.md.\n");
            return 0;
        } else
            return 2;
    }
    if (argc - optind > 1) {
        fprintf(stderr, "usage: gpuprof audit [--verify] [--json] [STORE|FILE]\n");
        return 2;
    }
    const char *path = optind < argc ? argv[optind] : "gpuprof.db";
    gp_audit_rec *r = NULL;
    size_t n = 0;
    gp_err err = {0};
    if (gp_audit_read(path, &r, &n, &err)) {
        fprintf(stderr, "gpuprof: %s\n", err.msg);
        return 2;
    }
    char why[256] = "";
    long bad = verify ? gp_audit_verify(r, n, why, sizeof why) : -2;
    if (json)
        gp_audit_write_json(stdout, r, n, bad, why);
    else
        gp_audit_write_text(stdout, r, n, bad, why);
    gp_audit_free(r, n);
    if (fflush(stdout)) return 1;
    return bad >= 0 ? 1 : 0;
}
