/*
 * The built-in models against their published counts, the layer counts against their formulas,
 * and model files: a round trip, and every kind of bad file (one line each, naming the file,
 * the line and the layer type).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sim/model/model.h"

static void test_resnet50(void **state)
{
    sim_model_t m;
    uint64_t convs = 0;

    (void)state;
    assert_int_equal(sim_model_resnet50(&m), 0);
    /* torchvision's resnet50 (v1.5) has 25,557,032 parameters; He et al. quote 25.6 M. */
    assert_int_equal(sim_model_params(&m), 25557032);
    /* 4.09 G multiply-adds forward: 8.18 GFLOP counting 2 per multiply-add. */
    assert_true(sim_model_macs_per_sample(&m) == 4089184256.0);
    assert_true(2 * sim_model_macs_per_sample(&m) > 8.1e9 &&
                2 * sim_model_macs_per_sample(&m) < 8.3e9);
    for (size_t i = 0; i < m.num_layers; i++)
        convs += m.layers[i].type == SIM_LAYER_CONV;
    assert_int_equal(convs, 53); /* conv1, 16 x 3 in the bottlenecks, 4 projections */
    assert_string_equal(m.layers[m.num_layers - 2].name, "fc");
    assert_int_equal(sim_layer_out_values(&m.layers[0]), 112 * 112 * 64);
    assert_int_equal(m.layers[0].input_grad, 0);
    sim_model_free(&m);
}

static void test_bert_large(void **state)
{
    sim_model_t m;
    uint64_t encoder = 0;

    (void)state;
    assert_int_equal(sim_model_bert_large(&m, 128, 1), 0);
    /* About 335 M with embeddings (Devlin et al. round BERT-Large to 340 M): embeddings
     * 31,782,912, 24 encoder layers of 12,596,224, pooler, NSP and MLM heads (the decoder's
     * weights are the word embedding's). */
    assert_int_equal(sim_model_params(&m), 336226108);
    for (size_t i = 0; i < m.num_layers; i++)
        if (m.layers[i].name[0] == 'l' && m.layers[i].name[1] >= '0' && m.layers[i].name[1] <= '9')
            encoder += sim_layer_params(&m.layers[i]);
    assert_int_equal(encoder, 24ULL * 12596224);
    /* Forward multiply-adds per sequence of 128: 24 x (128 x 12.58 M + 2 x 16 x 128^2 x 64)
     * plus the pooler, NSP and 20 masked positions through the MLM transform and decoder. */
    assert_true(
        sim_model_macs_per_sample(&m) ==
        24.0 * (128.0 * (1024 * 3072 + 1024 * 1024 + 2 * 1024 * 4096) + 2.0 * 16 * 128 * 128 * 64) +
            (1024 * 1024 + 1024 * 2) + 20.0 * (1024 * 1024 + 1024 * 30522));
    assert_true(m.samples_per_unit == 1);
    /* Every layer says its part: 6 embedding layers, 24 attention and 24 feed-forward sublayers
     * of 5 layers each, 9 head layers. */
    {
        size_t parts[SIM_PART_COUNT] = {0};

        for (size_t i = 0; i < m.num_layers; i++)
            parts[m.layers[i].part]++;
        assert_int_equal(parts[SIM_PART_NONE], 0);
        assert_int_equal(parts[SIM_PART_EMBEDDING], 6);
        assert_int_equal(parts[SIM_PART_ATTENTION], 24 * 5);
        assert_int_equal(parts[SIM_PART_FFN], 24 * 5);
        assert_int_equal(parts[SIM_PART_HEAD], 9);
    }
    sim_model_free(&m);
    /* At 512 packed 2 per pack, a unit is a pack of 2 sequences with 76 predictions: per
     * sample, half a pack. */
    assert_int_equal(sim_model_bert_large(&m, 512, 2), 0);
    assert_true(m.samples_per_unit == 2);
    assert_int_equal(sim_model_params(&m), 336226108);
    assert_true(sim_model_macs_per_sample(&m) == 169960861696.0 / 2);
    assert_int_equal(m.pin_first, 0);
    sim_model_free(&m);
    /* 1.5 sequences per pack: the same pack, a third more of it per sample. */
    assert_int_equal(sim_model_bert_large(&m, 512, 1.5), 0);
    assert_true(fabs(sim_model_macs_per_sample(&m) - 169960861696.0 / 1.5) < 1);
    assert_int_equal(m.input_bytes, 5461); /* 16 x 512 / 1.5, rounded */
    sim_model_free(&m);
    assert_int_equal(sim_model_bert_large(&m, 256, 1), -EINVAL);
    assert_int_equal(sim_model_bert_large(&m, 512, 0.5), -EINVAL);
}

/* Writes TEXT to a temporary file and loads it: the load's return; ERR gets its message. */
static int load_text(const char *text, sim_model_t *m, char *err, size_t len, char *path)
{
    FILE *f;
    int fd, rc;

    strcpy(path, "/tmp/test_sim_model_XXXXXX");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    rc = sim_model_load(path, m, err, len);
    unlink(path);
    return rc;
}

static void test_model_file(void **state)
{
    static const char text[] = "# a small CNN\n"
                               "gcl-model 1\n"
                               "name tiny-cnn\n"
                               "input_bytes 3072\n"
                               "host_samples_per_s 90000\n"
                               "optimizer adam\n"
                               "recompute checkpoints\n"
                               "layer conv name=c1 h=32 w=32 cin=3 cout=16 kernel=3 input_grad=0\n"
                               "layer norm values=16384 channels=16\n"
                               "layer elementwise values=16384 checkpoint=1   # ReLU\n"
                               "dtype f32\n"
                               "layer pool h=32 w=32 channels=16 kernel=32\n"
                               "layer matmul in=16 out=10 bias=1\n"
                               "layer loss classes=10\n";
    sim_model_t m, back;
    char err[512], path[64];
    FILE *f;

    (void)state;
    assert_int_equal(load_text(text, &m, err, sizeof(err), path), 0);
    assert_string_equal(m.name, "tiny-cnn");
    assert_int_equal(m.num_layers, 6);
    assert_int_equal(m.input_bytes, 3072);
    assert_int_equal(m.optimizer, SIM_OPTIM_ADAM);
    assert_int_equal(m.recompute, SIM_RECOMPUTE_CHECKPOINTS);
    assert_int_equal(m.layers[0].pad, 1); /* kernel / 2 by default */
    assert_int_equal(m.layers[0].input_grad, 0);
    assert_int_equal(m.layers[2].checkpoint, 1);
    assert_int_equal(m.layers[3].stride, 32); /* a pool's stride defaults to its kernel */
    assert_int_equal(m.layers[3].prec, SIM_PREC_F32);
    assert_int_equal(sim_model_params(&m), 3 * 3 * 3 * 16 + 2 * 16 + 16 * 10 + 10);
    /* The writer's output reads back to the same model. */
    f = tmpfile();
    assert_int_equal(sim_model_write(&m, f), 0);
    rewind(f);
    {
        char buf[4096];
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);

        buf[n] = '\0';
        assert_int_equal(load_text(buf, &back, err, sizeof(err), path), 0);
    }
    fclose(f);
    assert_int_equal(back.num_layers, m.num_layers);
    for (size_t i = 0; i < m.num_layers; i++)
        assert_memory_equal(&back.layers[i], &m.layers[i], sizeof(sim_layer_t));
    sim_model_free(&back);
    sim_model_free(&m);
}

static void expect_error(const char *text, int line, const char *want)
{
    sim_model_t m;
    char err[512], path[64], prefix[96];

    assert_int_equal(load_text(text, &m, err, sizeof(err), path), -EINVAL);
    snprintf(prefix, sizeof(prefix), "%s:%d: ", path, line);
    if (strncmp(err, prefix, strlen(prefix)) != 0 || !strstr(err, want) || strchr(err, '\n'))
        fail_msg("got '%s', want '%s...%s'", err, prefix, want);
}

static void test_bad_model_files(void **state)
{
    (void)state;
    expect_error("gcl-model 1\nlayer lstm hidden=1024\n", 2,
                 "unsupported layer type 'lstm' (supported types: matmul, conv, attention, "
                 "elementwise, norm, pool, embedding, loss)");
    expect_error("gcl-model 1\nlayer\n", 2, "layer needs a type (supported types: matmul");
    expect_error("gcl-model 1\nlayer conv h=8 w=8 cin=3 kernel=3\n", 2, "conv: cout must be 1..");
    expect_error(
        "gcl-model 1\nlayer conv h=8 w=8 cin=3 cout=4 kernl=3\n", 2,
        "conv: unknown key 'kernl' (conv takes h, w, cin, cout, kernel, stride, pad, bias");
    expect_error("gcl-model 1\nlayer matmul in=8 out=x\n", 2,
                 "matmul: out must be a whole number from 0 to");
    expect_error("gcl-model 1\nlayer matmul in=8 out\n", 2, "matmul: 'out' is not key=value");
    expect_error("gcl-model 1\nlayer matmul in=8 out=8 dtype=f64\n", 2,
                 "matmul: dtype must be f16 or f32");
    expect_error("gcl-model 1\nlayer pool h=4 w=4 channels=2 kernel=9\n", 2,
                 "pool: the kernel (9) is larger than the padded input");
    expect_error("gcl-model 2\n", 1, "unsupported format version '2'");
    expect_error("layer matmul in=8 out=8\n", 1, "a model file starts with 'gcl-model 1'");
    expect_error("gcl-model 1\noptimizer lion\n", 2,
                 "optimizer must be sgd, momentum, adam, lamb or lars");
    expect_error("gcl-model 1\nname a\nname b\n", 3, "name is set twice (first on line 2)");
    expect_error("gcl-model 1\nsamples_per_unit 0\n", 2, "samples_per_unit must be a number from 1");
    expect_error("gcl-model 1\nsamples_per_unit 1.2345\n", 2, "up to 3 decimals");
    expect_error("gcl-model 1\nlayer matmul in=4 out=4 part=body\n", 2,
                 "part must be none, embedding, attention, ffn or head");
    expect_error("gcl-model 1\nbatch 32\n", 2, "unknown setting 'batch'");
    expect_error("gcl-model 1\nlayer matmul in=8 out=8\x01\n", 2, "invalid byte 0x01");
    expect_error("gcl-model 1\n", 1, "the model has no layer lines");
}

static void test_open(void **state)
{
    sim_model_t m;
    char err[256];

    (void)state;
    assert_int_equal(sim_model_open("resnet50", 0, 0, &m, err, sizeof(err)), 0);
    sim_model_free(&m);
    assert_int_equal(sim_model_open("bert-large", 300, 0, &m, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "128 or 512"));
    assert_int_equal(sim_model_open("/nonexistent/model.txt", 0, 0, &m, err, sizeof(err)), -ENOENT);
    assert_non_null(strstr(err, "cannot open model file '/nonexistent/model.txt'"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resnet50),   cmocka_unit_test(test_bert_large),
        cmocka_unit_test(test_model_file), cmocka_unit_test(test_bad_model_files),
        cmocka_unit_test(test_open),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
