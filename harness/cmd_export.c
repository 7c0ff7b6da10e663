/* cmd_export.c - `harness export --predictions`: trajectory records as
 * SWE-bench's predictions JSONL (harness/swebench.h). */
#include "harness/cli.h"

#include "common/err.h"
#include "harness/swebench.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: harness export --predictions OUT.jsonl --from RECORDS.jsonl [--model-name NAME]\n"
               "Writes SWE-bench's predictions file: one line per trajectory record,\n"
               "{\"instance_id\": the record's task, \"model_name_or_path\": NAME (default: the\n"
               "record's policy), \"model_patch\": the episode's final diff}. A record without a\n"
               "patch gives an empty model_patch (counted in the summary). OUT is written whole\n"
               "(temp file + rename) or not at all. Exit 1 on a bad record, 2 on a usage error.\n"
               "Evaluate with SWE-bench: python -m swebench.harness.run_evaluation\n"
               "  --predictions_path OUT.jsonl --dataset_name DATASET --run_id ID\n");
}

int cmd_export(int argc, char **argv)
{
    const char *out = NULL, *from = NULL, *model = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--predictions") && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(a, "--from") && i + 1 < argc) {
            from = argv[++i];
        } else if (!strcmp(a, "--model-name") && i + 1 < argc) {
            model = argv[++i];
            if (!*model) {
                fprintf(stderr, "harness export: --model-name: expected a non-empty name\n");
                return 2;
            }
        } else {
            fprintf(stderr, "harness export: unexpected argument '%s' (see --help)\n", a);
            return 2;
        }
    }
    if (!out || !from) {
        fprintf(stderr, "harness export: expected --predictions OUT.jsonl and --from RECORDS.jsonl (see --help)\n");
        return 2;
    }
    char err[RL_ERR_MAX];
    swb_export_stats st;
    if (swb_export(&st, out, from, model, err) < 0) {
        fprintf(stderr, "harness export: %s\n", err);
        return 1;
    }
    printf("%s: %zu predictions, %zu with an empty model_patch (the record had no patch)\n", out, st.records,
           st.no_patch);
    return 0;
}
