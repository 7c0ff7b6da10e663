/* cmd_hf.c - `grpo import-hf` and `grpo export-hf`: Hugging Face checkpoint
 * directories to and from the trainer's checkpoints.
 *
 *   grpo import-hf DIR --out CKPT [--tokenizer FILE] [--max-seq N] [--template NAME]
 *   grpo export-hf CKPT --out DIR [--dtype f32|bf16]
 *
 * import-hf reads DIR (config.json plus model.safetensors or its shards;
 * Qwen3, Qwen2 and Llama; BF16, F16, F32) and writes CKPT, an fp32
 * checkpoint. DIR's tokenizer.json and tokenizer_config.json are copied
 * into CKPT's directory and named in its metadata (hf_tokenizer,
 * hf_tokenizer_config); the copied tokenizer.json is the checkpoint's
 * tokenizer (what run, sft, grpo and serve encode with) unless --tokenizer
 * names a built-in BPE tokenizer file instead (its vocabulary must fit the
 * model's). The metadata also names the chat template the checkpoint
 * speaks (--template, else the one DIR's tokenizer_config.json renders as:
 * qwen3 for the Qwen3 checkpoints' template; else none, which is qwen3-xml).
 * export-hf writes DIR/config.json, DIR/model.safetensors (fp32, or bf16
 * with --dtype bf16) and the Hugging Face tokenizer files the checkpoint
 * names. CKPT may also be a Hugging Face directory.
 */
#include "grpo/cli.h"
#include "harness/episode.h"
#include "model/model.h"
#include "protocol/template.h"

#include "common/arg.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void import_usage(FILE *f)
{
    fprintf(f, "usage: grpo import-hf DIR --out CKPT [--tokenizer FILE] [--max-seq N] [--template NAME]\n"
               "\n"
               "Converts a Hugging Face checkpoint directory (config.json of a Qwen3ForCausalLM,\n"
               "Qwen2ForCausalLM or LlamaForCausalLM; model.safetensors or shards with\n"
               "model.safetensors.index.json; BF16, F16 or F32) into an fp32 checkpoint.\n"
               "DIR's tokenizer.json and tokenizer_config.json are copied beside CKPT and\n"
               "named in its metadata; the tokenizer.json is the checkpoint's tokenizer.\n"
               "  --out CKPT        the checkpoint to write (.safetensors)\n"
               "  --tokenizer FILE  a BPE tokenizer file of `grpo tokenizer` to use instead\n"
               "                    (its vocabulary must fit the model's)\n"
               "  --max-seq N       context window (default: max_position_embeddings, at most\n"
               "                    %d); KV caches and rotary tables are sized by it\n"
               "  --template NAME   the chat template the checkpoint speaks, recorded in its\n"
               "                    metadata (qwen3 or qwen3-xml; default: qwen3 when DIR's\n"
               "                    tokenizer_config.json has the Qwen3 chat template, else\n"
               "                    none recorded: qwen3-xml)\n",
            RL_MODEL_SEQ_MAX);
}

static void export_usage(FILE *f)
{
    fprintf(f, "usage: grpo export-hf CKPT --out DIR [--dtype f32|bf16]\n"
               "\n"
               "Writes a checkpoint (or a Hugging Face directory) as a Hugging Face directory:\n"
               "config.json (Qwen3ForCausalLM with q/k norm, Qwen2ForCausalLM with q/k/v\n"
               "biases, else LlamaForCausalLM), model.safetensors, and the tokenizer.json and\n"
               "tokenizer_config.json the checkpoint names.\n"
               "  --out DIR         the directory to write (created)\n"
               "  --dtype f32|bf16  tensor type of model.safetensors (default f32; bf16\n"
               "                    rounds to nearest even)\n");
}

/* Copies file src to dst (whole, capped). */
static int copy_file(const char *src, const char *dst, char *err)
{
    char *data;
    size_t len;
    int rc = fs_read_file(&data, &len, src, RL_MODEL_HF_TOKENIZER_MAX, err);
    if (rc < 0)
        return rc;
    rc = fs_write_atomic(dst, data, len, err);
    free(data);
    return rc;
}

/* Parses "CMD POSITIONAL --out X [--flag V]..." into pos, out and the
 * values of flags[0..n) (NULL when absent). Returns 0, -1 after --help, or
 * the exit code 2. */
static int parse_args(const char *cmd, int argc, char **argv, const char **pos, const char **out,
                      const char *const *flags, const char **fvals, int n, void (*usage)(FILE *))
{
    *pos = *out = NULL;
    for (int k = 0; k < n; k++)
        fvals[k] = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return -1;
        }
        if (a[0] == '-' && a[1] == '-') {
            const char **dst = !strcmp(a, "--out") ? out : NULL;
            for (int k = 0; k < n && !dst; k++)
                if (!strcmp(a, flags[k]))
                    dst = &fvals[k];
            if (!dst) {
                fprintf(stderr, "grpo %s: unknown option '%s'\n", cmd, a);
                usage(stderr);
                return 2;
            }
            if (i + 1 >= argc) {
                fprintf(stderr, "grpo %s: %s: expected a value\n", cmd, a);
                return 2;
            }
            *dst = argv[++i];
        } else if (!*pos) {
            *pos = a;
        } else {
            fprintf(stderr, "grpo %s: unexpected argument '%s'\n", cmd, a);
            usage(stderr);
            return 2;
        }
    }
    if (!*pos || !*out) {
        fprintf(stderr, "grpo %s: needs %s and --out\n", cmd, !strcmp(cmd, "import-hf") ? "DIR" : "CKPT");
        usage(stderr);
        return 2;
    }
    return 0;
}

int cmd_import_hf(int argc, char **argv)
{
    const char *dir, *out, *fv[3];
    static const char *const flags[3] = {"--tokenizer", "--max-seq", "--template"};
    int prc = parse_args("import-hf", argc, argv, &dir, &out, flags, fv, 3, import_usage);
    if (prc)
        return prc < 0 ? 0 : prc;
    const char *tokfile = fv[0];
    char err[RL_ERR_MAX];
    int max_seq = 0;
    if (fv[1] && arg_int(&max_seq, "--max-seq", fv[1], 1, RL_MODEL_SEQ_MAX, err) < 0) {
        fprintf(stderr, "grpo import-hf: %s\n", err);
        return 2;
    }
    tpl_kind kind = TPL_QWEN3_XML;
    if (fv[2] && tpl_kind_parse(&kind, fv[2], err) < 0) {
        fprintf(stderr, "grpo import-hf: --template: %s\n", err);
        return 2;
    }
    if (!fs_is_dir(dir)) {
        fprintf(stderr, "grpo import-hf: %s: expected a Hugging Face checkpoint directory\n", dir);
        return 1;
    }
    if (!fv[2]) {
        int k = ep_template_of_ckpt(dir, err);
        if (k < 0) {
            fprintf(stderr, "grpo import-hf: %s\n", err);
            return 1;
        }
        kind = (tpl_kind)k;
    }
    model *m;
    if (model_load_hf(&m, dir, NULL, err)) {
        fprintf(stderr, "grpo import-hf: %s\n", err);
        return 1;
    }
    if (max_seq && max_seq != m->cfg.max_seq) { /* the window sizes only the rotary tables and caches */
        model_config c = m->cfg;
        c.max_seq = max_seq;
        model *w;
        if (model_new(&w, &c, NULL, err)) {
            fprintf(stderr, "grpo import-hf: %s\n", err);
            model_free(m);
            return 1;
        }
        memcpy(w->params, m->params, m->n_params * sizeof(float));
        model_free(m);
        m = w;
    }
    model_meta meta, src;
    model_meta_default(&meta);
    model_meta_default(&src);
    if (fv[2] || kind != TPL_QWEN3_XML)
        snprintf(meta.chat_template, sizeof meta.chat_template, "%s", tpl_kind_name(kind));
    model_hf_tokenizer_files(&src, dir);
    /* room for "/tokenizer_config.json" within the metadata's path field */
    char outdir[RL_MODEL_HF_PATH_MAX - 64], path[RL_MODEL_HF_PATH_MAX];
    if (strlen(out) >= sizeof outdir) {
        fprintf(stderr, "grpo import-hf: --out: expected a path shorter than %zu bytes\n", sizeof outdir);
        model_free(m);
        return 2;
    }
    fs_dirname(outdir, sizeof outdir, out);
    int rc = 0;
    if (tokfile) {
        char hash[17];
        if ((rc = model_file_hash(hash, tokfile, err)) == 0) {
            snprintf(meta.tokenizer, sizeof meta.tokenizer, "%s", tokfile);
            snprintf(meta.tokenizer_hash, sizeof meta.tokenizer_hash, "%s", hash);
        }
    }
    if (!rc)
        rc = fs_mkdirs(outdir, err);
    const char *srcs[2] = {src.hf_tokenizer, src.hf_tokenizer_config};
    const char *names[2] = {"tokenizer.json", "tokenizer_config.json"};
    char *dsts[2] = {meta.hf_tokenizer, meta.hf_tokenizer_config};
    for (int i = 0; i < 2 && !rc; i++) {
        if (!srcs[i][0])
            continue;
        snprintf(path, sizeof path, "%s/%s", outdir, names[i]);
        if ((rc = copy_file(srcs[i], path, err)) == 0)
            memcpy(dsts[i], path, strlen(path) + 1);
    }
    if (!rc && !tokfile && meta.hf_tokenizer[0]) { /* the checkpoint speaks its own tokenizer.json */
        char hash[17];
        if ((rc = model_file_hash(hash, meta.hf_tokenizer, err)) == 0) {
            snprintf(meta.tokenizer, sizeof meta.tokenizer, "%s", meta.hf_tokenizer);
            snprintf(meta.tokenizer_hash, sizeof meta.tokenizer_hash, "%s", hash);
        }
    }
    if (!rc)
        rc = model_save(m, out, &meta, err);
    if (rc) {
        fprintf(stderr, "grpo import-hf: %s\n", err);
        model_free(m);
        return 1;
    }
    const char *arch = "?";
    model_hf_arch(&m->cfg, &arch, NULL);
    fprintf(stderr, "grpo import-hf: %s (%s, %zu parameters, vocab %d, %d layers) -> %s%s, template %s\n", dir,
            arch, m->n_params, m->cfg.vocab, m->cfg.n_layer, out, meta.hf_tokenizer[0] ? " with tokenizer.json" : "",
            tpl_kind_name(kind));
    model_free(m);
    return 0;
}

int cmd_export_hf(int argc, char **argv)
{
    const char *ckpt, *dir, *dtype;
    static const char *const flags[1] = {"--dtype"};
    int prc = parse_args("export-hf", argc, argv, &ckpt, &dir, flags, &dtype, 1, export_usage);
    if (prc)
        return prc < 0 ? 0 : prc;
    if (dtype && strcmp(dtype, "f32") != 0 && strcmp(dtype, "bf16") != 0) {
        fprintf(stderr, "grpo export-hf: --dtype: expected f32 or bf16, got '%s'\n", dtype);
        return 2;
    }
    char err[RL_ERR_MAX], path[RL_MODEL_HF_PATH_MAX + 32];
    model *m;
    model_meta meta;
    if (model_load(&m, &meta, ckpt, NULL, err)) {
        fprintf(stderr, "grpo export-hf: %s\n", err);
        return 1;
    }
    int rc = model_save_hf(m, dir, dtype && !strcmp(dtype, "bf16"), err);
    const char *srcs[2] = {meta.hf_tokenizer, meta.hf_tokenizer_config};
    const char *names[2] = {"tokenizer.json", "tokenizer_config.json"};
    for (int i = 0; i < 2 && !rc; i++) {
        if (!srcs[i][0])
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (strcmp(srcs[i], path) != 0)
            rc = copy_file(srcs[i], path, err);
    }
    if (rc) {
        fprintf(stderr, "grpo export-hf: %s\n", err);
        model_free(m);
        return 1;
    }
    const char *arch = "?";
    model_hf_arch(&m->cfg, &arch, NULL);
    fprintf(stderr, "grpo export-hf: %s -> %s (%s, %s)%s\n", ckpt, dir, arch, dtype ? dtype : "f32",
            meta.hf_tokenizer[0] ? "" : "; the checkpoint names no tokenizer.json, none written");
    model_free(m);
    return 0;
}
