/* Tests of the C runtime on a real OpenCL device (PoCL in CI).
 *
 *   test_runtime            everything that needs a device
 *   test_runtime nodevice   expects no usable device (run with F2LOOPY_DEVICE set
 *                           to a platform that does not exist)
 *   test_runtime choice [R] prints the device chosen (for node-local rank R)
 *
 * Prints one line per failed check and exits with the number of failures. */
#include "f2loopy_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        if (!(cond)) {                                                    \
            failures++;                                                   \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);        \
            printf(__VA_ARGS__);                                          \
            printf("\n  last error: %s\n", f2l_error_message());          \
        }                                                                 \
    } while (0)

static const char *SOURCE =
    "__kernel void axpy(int n, float a, __global const float *x, __global float *y)\n"
    "{\n"
    "    int i = get_global_id(0);\n"
    "    if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n"
    "__kernel void total(int n, __global const double *x, __global double *s)\n"
    "{\n"
    "    double t = 0;\n"
    "    for (int i = 0; i < n; i++) t += x[i];\n"
    "    s[0] = t;\n"
    "}\n"
    "/* b(i, j) = a(j, i) + 10*i: b stored with its first axis slowest */\n"
    "__kernel void rowsum(int n, int m, __global const int *a, __global int *r)\n"
    "{\n"
    "    for (int i = 0; i < n; i++) {\n"
    "        int s = 0;\n"
    "        for (int j = 0; j < m; j++) s += a[i * m + j];\n"
    "        r[i] = s;\n"
    "    }\n"
    "}\n";

static const int64_t ONE[3] = {1, 1, 1};

static f2l_kernel *kernel(const char *name)
{
    f2l_kernel *k = NULL;
    int st = f2l_kernel_get(SOURCE, "-cl-std=CL1.2", name, &k);
    CHECK(st == F2L_OK && k, "getting kernel %s: status %d", name, st);
    return k;
}

static void test_transfer_mode(void)
{
    float x[37], y[37];
    for (int i = 0; i < 37; i++) {
        x[i] = (float)i;
        y[i] = 1.0f;
    }
    int n = 37;
    float a = 2.0f;
    f2l_launch *L;
    CHECK(f2l_launch_begin(kernel("axpy"), &L) == F2L_OK, "begin");
    f2l_launch_value(L, 0, &n, sizeof n);
    f2l_launch_value(L, 1, &a, sizeof a);
    f2l_launch_array(L, 2, "x", x, sizeof x, 0);
    f2l_launch_array(L, 3, "y", y, sizeof y, 1);
    int64_t groups[3] = {3, 1, 1}, local[3] = {16, 1, 1};
    int st = f2l_launch_run(L, groups, local);
    f2l_launch_end(L);
    CHECK(st == F2L_OK, "run: status %d", st);
    int bad = 0;
    for (int i = 0; i < 37; i++)
        bad += y[i] != 2.0f * (float)i + 1.0f;
    CHECK(!bad, "%d wrong values of y", bad);
    CHECK(x[5] == 5.0f, "x changed");
}

/* Launch sequences set a kernel's arguments once and then only what changes
 * (f2l_launch_value again: a host loop's index).  Two sequences that use one
 * kernel in turn must each see their own arguments: y1 gets 1*x, 2*x, 3*x
 * added (a = 1, 2, 3), y2 gets 10*x twice, the launches interleaved. */
static void test_interleaved_sequences(void)
{
    float x[20], y1[20], y2[20];
    for (int i = 0; i < 20; i++) {
        x[i] = (float)(i + 1);
        y1[i] = y2[i] = 0.0f;
    }
    int n = 20;
    float a1 = 1.0f, a2 = 10.0f;
    const int slots[4] = {0, 1, 2, 3};
    int64_t groups[3] = {2, 1, 1}, local[3] = {16, 1, 1};
    f2l_kernel *k = kernel("axpy");
    CHECK(f2l_kernel_current(k) == 1 && f2l_kernel_current(NULL) == 0, "current");
    f2l_launch *L1, *L2;
    CHECK(f2l_launch_begin(k, &L1) == F2L_OK && f2l_launch_begin(k, &L2) == F2L_OK, "begin");
    f2l_launch_value(L1, 0, &n, sizeof n);
    f2l_launch_value(L1, 1, &a1, sizeof a1);
    f2l_launch_array(L1, 2, "x", x, sizeof x, 0);
    f2l_launch_array(L1, 3, "y1", y1, sizeof y1, 1);
    f2l_launch_value(L2, 0, &n, sizeof n);
    f2l_launch_value(L2, 1, &a2, sizeof a2);
    f2l_launch_array(L2, 2, "x", x, sizeof x, 0);
    f2l_launch_array(L2, 3, "y2", y2, sizeof y2, 1);
    int st = f2l_launch_enqueue(L1, k, slots, 4, groups, local);
    a1 = 2.0f;
    st = st ? st : f2l_launch_value(L1, 1, &a1, sizeof a1);
    st = st ? st : f2l_launch_enqueue(L1, k, slots, 4, groups, local);
    st = st ? st : f2l_launch_enqueue(L2, k, slots, 4, groups, local);
    a1 = 3.0f;
    st = st ? st : f2l_launch_value(L1, 1, &a1, sizeof a1);
    st = st ? st : f2l_launch_enqueue(L1, k, slots, 4, groups, local);
    st = st ? st : f2l_launch_enqueue(L2, k, slots, 4, groups, local);
    st = st ? st : f2l_launch_complete(L1);
    st = st ? st : f2l_launch_complete(L2);
    f2l_launch_end(L1);
    f2l_launch_end(L2);
    CHECK(st == F2L_OK, "status %d", st);
    int bad = 0;
    for (int i = 0; i < 20; i++)
        bad += y1[i] != 6.0f * x[i] || y2[i] != 20.0f * x[i];
    CHECK(!bad, "%d wrong values (y1[0] = %g, y2[0] = %g)", bad, y1[0], y2[0]);

    /* one kernel enqueued with 4 slots, then with the first 2 (the others keep
     * what was set): y1 gets 1*x, then 5*x added */
    for (int i = 0; i < 20; i++)
        y1[i] = 0.0f;
    a1 = 1.0f;
    CHECK(f2l_launch_begin(k, &L1) == F2L_OK, "begin");
    f2l_launch_value(L1, 0, &n, sizeof n);
    f2l_launch_value(L1, 1, &a1, sizeof a1);
    f2l_launch_array(L1, 2, "x", x, sizeof x, 0);
    f2l_launch_array(L1, 3, "y1", y1, sizeof y1, 1);
    st = f2l_launch_enqueue(L1, k, slots, 4, groups, local);
    a1 = 5.0f;
    st = st ? st : f2l_launch_value(L1, 1, &a1, sizeof a1);
    st = st ? st : f2l_launch_enqueue(L1, k, slots, 2, groups, local);
    st = st ? st : f2l_launch_complete(L1);
    f2l_launch_end(L1);
    bad = 0;
    for (int i = 0; i < 20; i++)
        bad += y1[i] != 6.0f * x[i];
    CHECK(st == F2L_OK && !bad, "status %d, %d wrong values (y1[0] = %g)", st, bad, y1[0]);
}

static void test_program_cache(void)
{
    f2l_kernel *a = kernel("axpy"), *b = kernel("axpy"), *c = kernel("total");
    CHECK(a == b, "the same kernel twice gives two objects");
    CHECK(a != c, "two kernels share an object");
    f2l_kernel *d = NULL;
    CHECK(f2l_kernel_get(SOURCE, "-cl-std=CL1.2 -DOTHER", "axpy", &d) == F2L_OK && d != a,
          "other options must give another program");
}

static void test_cached_kernel_survives_shutdown(void)
{
    f2l_kernel *cache = NULL;
    CHECK(f2l_kernel_cached(&cache, SOURCE, "-cl-std=CL1.2", "axpy") == F2L_OK && cache,
          "first lookup");
    f2l_kernel *first = cache;
    CHECK(f2l_kernel_cached(&cache, SOURCE, "-cl-std=CL1.2", "axpy") == F2L_OK &&
          cache == first, "the cache is used");
    f2l_shutdown();
    CHECK(f2l_kernel_cached(&cache, SOURCE, "-cl-std=CL1.2", "axpy") == F2L_OK &&
          cache != first, "a stale handle is looked up again");
    test_transfer_mode();
}

static void test_scalar_output(void)
{
    double x[5] = {1, 2, 3, 4, 5.5}, s = -1;
    int n = 5;
    f2l_launch *L;
    f2l_launch_begin(kernel("total"), &L);
    f2l_launch_value(L, 0, &n, sizeof n);
    f2l_launch_array(L, 1, "x", x, sizeof x, 0);
    f2l_launch_scalar(L, 2, &s, sizeof s);
    int st = f2l_launch_run(L, ONE, ONE);
    f2l_launch_end(L);
    CHECK(st == F2L_OK && s == 15.5, "status %d, s = %g", st, s);
}

static void test_build_failure(void)
{
    f2l_kernel *k = NULL;
    int st = f2l_kernel_get("__kernel void broken(__global float *x) { x[0] = undefined_name; }",
                            "", "broken", &k);
    CHECK(st == F2L_ERROR_BUILD, "status %d", st);
    CHECK(k == NULL, "a kernel was returned");
    CHECK(strstr(f2l_error_message(), "CL_BUILD_PROGRAM_FAILURE") != NULL, "no error name");
    CHECK(strstr(f2l_error_message(), "undefined_name") != NULL, "no build log");
    CHECK(f2l_error_cl_code() == -11, "cl code %d", f2l_error_cl_code());
}

static void test_bad_kernel_name(void)
{
    f2l_kernel *k = NULL;
    int st = f2l_kernel_get(SOURCE, "-cl-std=CL1.2", "nonexistent", &k);
    CHECK(st == F2L_ERROR_OPENCL, "status %d", st);
    CHECK(strstr(f2l_error_message(), "CL_INVALID_KERNEL_NAME") != NULL, "no error name");
    CHECK(strstr(f2l_error_message(), "nonexistent") != NULL, "no kernel name");
}

static void test_errors_are_sticky(void)
{
    float x[4] = {0}, y[4] = {0};
    int n = 4;
    f2l_launch *L;
    f2l_launch_begin(kernel("axpy"), &L);
    f2l_launch_value(L, 0, &n, sizeof n);
    int st = f2l_launch_value(L, 1, x, 100);   /* too large for a scalar */
    CHECK(st == F2L_ERROR_ARGUMENT, "status %d", st);
    CHECK(f2l_launch_array(L, 2, "x", x, sizeof x, 0) == F2L_ERROR_ARGUMENT, "not sticky");
    CHECK(f2l_launch_array(L, 3, "y", y, sizeof y, 1) == F2L_ERROR_ARGUMENT, "not sticky");
    CHECK(f2l_launch_run(L, ONE, ONE) == F2L_ERROR_ARGUMENT, "ran after an error");
    f2l_launch_end(L);
}

static void test_resident(void)
{
    float x[8], y[8];
    for (int i = 0; i < 8; i++) {
        x[i] = (float)i;
        y[i] = 0.0f;
    }
    CHECK(f2l_resident_upload(x, sizeof x) == F2L_OK, "upload x");
    CHECK(f2l_resident_upload(y, sizeof y) == F2L_OK, "upload y");
    CHECK(f2l_resident_count() == 2 && f2l_resident_query(y) && !f2l_resident_query(y + 1),
          "registry");
    int n = 8;
    float a = 1.0f;
    for (int step = 0; step < 3; step++) {
        f2l_launch *L;
        f2l_launch_begin(kernel("axpy"), &L);
        f2l_launch_value(L, 0, &n, sizeof n);
        f2l_launch_value(L, 1, &a, sizeof a);
        f2l_launch_array(L, 2, "x", x, sizeof x, 0);
        f2l_launch_array(L, 3, "y", y, sizeof y, 1);
        CHECK(f2l_launch_run(L, ONE, (int64_t[3]){8, 1, 1}) == F2L_OK, "run %d", step);
        f2l_launch_end(L);
    }
    CHECK(y[3] == 0.0f, "the host copy changed before the download");
    CHECK(f2l_resident_download(y, sizeof y) == F2L_OK, "download");
    CHECK(y[3] == 9.0f && y[7] == 21.0f, "y = %g %g", y[3], y[7]);

    /* refresh from the host */
    y[0] = 100.0f;
    CHECK(f2l_resident_upload(y, sizeof y) == F2L_OK, "upload again");
    y[0] = -1.0f;
    CHECK(f2l_resident_download(y, sizeof y) == F2L_OK && y[0] == 100.0f, "y[0] = %g", y[0]);

    /* part of a resident array */
    f2l_launch *L;
    f2l_launch_begin(kernel("axpy"), &L);
    f2l_launch_value(L, 0, &n, sizeof n);
    f2l_launch_value(L, 1, &a, sizeof a);
    int st = f2l_launch_array(L, 2, "x", x + 1, 4 * sizeof(float), 0);
    f2l_launch_end(L);
    CHECK(st == F2L_ERROR_RESIDENT, "status %d", st);
    CHECK(strstr(f2l_error_message(), "argument 'x' overlaps a device-resident array") != NULL,
          "message");
    CHECK(f2l_resident_upload(x + 2, sizeof(float)) == F2L_ERROR_RESIDENT, "overlapping upload");
    CHECK(f2l_resident_download(x + 2, sizeof(float)) == F2L_ERROR_RESIDENT,
          "download of a part");
    CHECK(f2l_resident_download(x, 2 * sizeof x) == F2L_ERROR_RESIDENT, "download too much");

    CHECK(f2l_resident_release(x) == F2L_OK && f2l_resident_release(y) == F2L_OK, "release");
    CHECK(f2l_resident_release(y) == F2L_ERROR_RESIDENT, "second release");
    CHECK(f2l_resident_count() == 0, "count %d", f2l_resident_count());
    CHECK(f2l_finish() == F2L_OK, "finish");
}

static void test_partial(void)
{
    /* u: 4 columns of 5; the kernel adds a * x to the whole array on the device */
    float u[20], x[20], zero[20] = {0};
    for (int i = 0; i < 20; i++) {
        u[i] = (float)i;
        x[i] = 1.0f;
    }
    CHECK(f2l_resident_upload(u, sizeof u) == F2L_OK, "upload u");
    /* refresh the last column only: the device copy has 100.. there, the rest as before */
    for (int i = 15; i < 20; i++)
        u[i] = 100.0f + (float)i;
    u[0] = -5.0f;   /* not uploaded */
    CHECK(f2l_resident_upload_part(u, 15 * sizeof(float), 5 * sizeof(float)) == F2L_OK,
          "upload the last column");
    int n = 20;
    float a = 1.0f;
    f2l_launch *L;
    f2l_launch_begin(kernel("axpy"), &L);
    f2l_launch_value(L, 0, &n, sizeof n);
    f2l_launch_value(L, 1, &a, sizeof a);
    f2l_launch_array(L, 2, "x", x, sizeof x, 0);
    f2l_launch_array(L, 3, "y", u, sizeof u, 1);
    int st = f2l_launch_run(L, (int64_t[3]){2, 1, 1}, (int64_t[3]){16, 1, 1});
    f2l_launch_end(L);
    CHECK(st == F2L_OK, "run: status %d", st);
    /* download the second column through an address inside the array */
    float *col = u + 5;
    CHECK(f2l_resident_download_part(col, 0, 5 * sizeof(float)) == F2L_OK, "download column 2");
    CHECK(u[5] == 6.0f && u[9] == 10.0f, "column 2: %g %g", u[5], u[9]);
    CHECK(u[0] == -5.0f && u[10] == 10.0f && u[15] == 115.0f, "other columns untouched: %g %g %g",
          u[0], u[10], u[15]);
    CHECK(f2l_resident_download_part(u, 15 * sizeof(float), 5 * sizeof(float)) == F2L_OK,
          "download the last column");
    CHECK(u[15] == 116.0f && u[19] == 120.0f, "last column: %g %g", u[15], u[19]);
    CHECK(f2l_resident_download_part(u, 20 * sizeof(float), 0) == F2L_OK, "empty part at the end");
    /* outside the array, across its end, not resident at all */
    st = f2l_resident_download_part(u, 18 * sizeof(float), 3 * sizeof(float));
    CHECK(st == F2L_ERROR_RESIDENT && strstr(f2l_error_message(), "(12 bytes at byte 72 of a "
          "device-resident array of 80 bytes) runs past its end"), "across the end: %d", st);
    st = f2l_resident_upload_part(zero, 0, sizeof zero);
    CHECK(st == F2L_ERROR_RESIDENT && strstr(f2l_error_message(), "is not part of a "
          "device-resident array"), "not resident: %d", st);
    CHECK(f2l_resident_release(u) == F2L_OK, "release u");
    CHECK(f2l_resident_upload_part(u, 0, 4) == F2L_ERROR_RESIDENT, "after release");
}

static void test_relayout(void)
{
    /* a 2 x 3 Fortran array stored transposed: offset(i, j) = 3*i + j */
    int host[6] = {1, 2, 3, 4, 5, 6}, dev[6] = {0}, back[6] = {0};
    int64_t extents[2] = {2, 3};
    int64_t terms[8] = {0, 1, 0, 3, 1, 1, 0, 1};
    CHECK(f2l_relayout(host, dev, sizeof(int), 2, extents, 2, terms, 6, 1) == F2L_OK, "to dev");
    int want[6] = {1, 3, 5, 2, 4, 6};
    CHECK(!memcmp(dev, want, sizeof dev), "dev = %d %d %d %d %d %d", dev[0], dev[1], dev[2],
          dev[3], dev[4], dev[5]);
    CHECK(f2l_relayout(back, dev, sizeof(int), 2, extents, 2, terms, 6, 0) == F2L_OK, "back");
    CHECK(!memcmp(back, host, sizeof back), "round trip");
    /* a split axis: 5 elements at 3*(i mod 2) + (i div 2), padded to 6 */
    int64_t ext1[1] = {5}, split[8] = {0, 1, 2, 3, 0, 2, 0, 1};
    int v[5] = {1, 2, 3, 4, 5}, d2[6] = {0}, want2[6] = {1, 3, 5, 2, 4, 0};
    CHECK(f2l_relayout(v, d2, sizeof(int), 1, ext1, 2, split, 6, 1) == F2L_OK, "split");
    CHECK(!memcmp(d2, want2, sizeof d2), "split values %d %d %d %d %d %d", d2[0], d2[1], d2[2],
          d2[3], d2[4], d2[5]);
    CHECK(f2l_relayout(v, d2, sizeof(int), 1, ext1, 2, split, 4, 1) == F2L_ERROR_ARGUMENT,
          "an offset past the end must be refused");

    /* the kernel wants a(j, i) rows contiguous: rowsum of the transposed layout */
    int a[6] = {1, 2, 3, 4, 5, 6}, r[2] = {0}, n = 2, m = 3;
    f2l_launch *L;
    f2l_launch_begin(kernel("rowsum"), &L);
    f2l_launch_value(L, 0, &n, sizeof n);
    f2l_launch_value(L, 1, &m, sizeof m);
    f2l_launch_array_mapped(L, 2, "a", a, sizeof(int), 2, extents, 2, terms, 6, 0);
    f2l_launch_array(L, 3, "r", r, sizeof r, 1);
    int st = f2l_launch_run(L, ONE, ONE);
    f2l_launch_end(L);
    CHECK(st == F2L_OK && r[0] == 1 + 3 + 5 && r[1] == 2 + 4 + 6, "rowsum %d %d", r[0], r[1]);
}

static void test_empty_launch(void)
{
    float x[1] = {3}, y[1] = {4};
    int n = 0;
    float a = 1;
    f2l_launch *L;
    f2l_launch_begin(kernel("axpy"), &L);
    f2l_launch_value(L, 0, &n, sizeof n);
    f2l_launch_value(L, 1, &a, sizeof a);
    f2l_launch_array(L, 2, "x", x, 0, 0);
    f2l_launch_array(L, 3, "y", y, 0, 1);
    int st = f2l_launch_run(L, (int64_t[3]){0, 1, 1}, (int64_t[3]){16, 1, 1});
    f2l_launch_end(L);
    CHECK(st == F2L_OK && y[0] == 4, "status %d", st);
}

static void test_error_names(void)
{
    CHECK(!strcmp(f2l_cl_error_name(-46), "CL_INVALID_KERNEL_NAME"), "-46");
    CHECK(!strcmp(f2l_cl_error_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR"), "-1001");
    CHECK(!strcmp(f2l_cl_error_name(12345), "unknown OpenCL error"), "unknown");
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "nodevice")) {
        int st = f2l_init();
        CHECK(st == F2L_ERROR_NO_DEVICE, "status %d", st);
        printf("%s\n", f2l_error_message());
        f2l_kernel *k = NULL;
        CHECK(f2l_kernel_get(SOURCE, "", "axpy", &k) == F2L_ERROR_NO_DEVICE && !k,
              "later calls must report it too");
        float x[2] = {0};
        CHECK(f2l_resident_upload(x, sizeof x) == F2L_ERROR_NO_DEVICE, "upload");
        return failures;
    }
    if (argc > 1 && !strcmp(argv[1], "choice")) {
        /* test_runtime choice [RANK]: the device this process takes (for RANK) */
        int st = argc > 2 ? f2l_init_rank(atoi(argv[2])) : f2l_init();
        int rank = -2, index = -2, count = -2;
        char name[512] = "";
        if (st == F2L_OK)
            st = f2l_device_choice(&rank, &index, &count);
        if (st == F2L_OK)
            st = f2l_device_description(name, sizeof name);
        if (st != F2L_OK) {
            printf("error %d: %s\n", st, f2l_error_message());
            return 0;
        }
        printf("choice: rank %d device %d of %d: %s\n", rank, index, count, name);
        /* a rank cannot move the process to another device afterwards, unless the
         * environment pinned the device; the rank it has is fine */
        const char *pin = getenv("F2LOOPY_DEVICE");
        if (!pin || !*pin)
            pin = getenv("PYOPENCL_CTX");
        int pinned = pin && strchr(pin, ':');
        st = f2l_init_rank(index + 1);
        CHECK(count == 1 || pinned ? st == F2L_OK : st == F2L_ERROR_ARGUMENT &&
              strstr(f2l_error_message(), "the device was already chosen"),
              "late f2l_init_rank: %d", st);
        st = f2l_init_rank(rank < 0 ? 0 : rank);
        CHECK(st == F2L_OK, "the same rank again: %d", st);
        return failures;
    }
    char name[512];
    int st = f2l_device_description(name, sizeof name);
    CHECK(st == F2L_OK && name[0], "no device: %d", st);
    printf("device: %s\n", name);
    test_error_names();
    test_transfer_mode();
    test_interleaved_sequences();
    test_program_cache();
    test_scalar_output();
    test_build_failure();
    test_bad_kernel_name();
    test_errors_are_sticky();
    test_resident();
    test_partial();
    test_relayout();
    test_empty_launch();
    test_cached_kernel_survives_shutdown();
    f2l_shutdown();
    CHECK(f2l_resident_count() == 0, "after shutdown");
    test_transfer_mode();   /* starts again from scratch */
    f2l_shutdown();
    printf("%d failures\n", failures);
    return failures;
}
