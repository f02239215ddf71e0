/* f2loopy runtime: see f2loopy_runtime.h and README.md. */
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS

#include "f2loopy_runtime.h"

#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef __APPLE__
#include <OpenCL/opencl.h>
#else
#include <CL/cl.h>
#endif

/* {{{ errors */

static char *copy_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c)
        memcpy(c, s, n);
    return c;
}

static _Thread_local char *err_message;
static _Thread_local int err_code;
static _Thread_local int err_cl;

const char *f2l_error_message(void) { return err_message ? err_message : ""; }
int f2l_error_code(void) { return err_code; }
int f2l_error_cl_code(void) { return err_cl; }

void f2l_clear_error(void)
{
    free(err_message);
    err_message = NULL;
    err_code = F2L_OK;
    err_cl = 0;
}

static int set_message(int code, int cl, char *text)
{
    free(err_message);
    err_message = text;
    err_code = code;
    err_cl = cl;
    return code;
}

static char *vformat(const char *fmt, va_list ap)
{
    va_list ap2;
    char probe[1];
    va_copy(ap2, ap);
    int n = vsnprintf(probe, sizeof probe, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        n = 0;
    char *text = malloc((size_t)n + 1);
    if (text)
        vsnprintf(text, (size_t)n + 1, fmt, ap);
    return text;
}

/* Record an error and return its code. */
static int fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = vformat(fmt, ap);
    va_end(ap);
    return set_message(code, 0, text);
}

/* Record a failed OpenCL call: "<what>: CL_NAME (code)". */
static int fail_cl(cl_int cl, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *what = vformat(fmt, ap);
    va_end(ap);
    const char *name = f2l_cl_error_name(cl);
    size_t n = (what ? strlen(what) : 0) + strlen(name) + 64;
    char *text = malloc(n);
    if (text)
        snprintf(text, n, "%s: OpenCL error %s (%d)", what ? what : "", name, (int)cl);
    free(what);
    return set_message(F2L_ERROR_OPENCL, cl, text);
}

int f2l_set_error(int code, const char *message)
{
    return set_message(code, 0, copy_string(message ? message : ""));
}

void f2l_prefix_error(const char *prefix)
{
    if (!prefix || !*prefix)
        return;
    const char *old = f2l_error_message();
    size_t n = strlen(prefix) + strlen(old) + 3;
    char *text = malloc(n);
    if (!text)
        return;
    snprintf(text, n, "%s: %s", prefix, old);
    free(err_message);
    err_message = text;
}

const char *f2l_cl_error_name(int code)
{
    switch (code) {
    case 0: return "CL_SUCCESS";
    case -1: return "CL_DEVICE_NOT_FOUND";
    case -2: return "CL_DEVICE_NOT_AVAILABLE";
    case -3: return "CL_COMPILER_NOT_AVAILABLE";
    case -4: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case -5: return "CL_OUT_OF_RESOURCES";
    case -6: return "CL_OUT_OF_HOST_MEMORY";
    case -7: return "CL_PROFILING_INFO_NOT_AVAILABLE";
    case -8: return "CL_MEM_COPY_OVERLAP";
    case -9: return "CL_IMAGE_FORMAT_MISMATCH";
    case -10: return "CL_IMAGE_FORMAT_NOT_SUPPORTED";
    case -11: return "CL_BUILD_PROGRAM_FAILURE";
    case -12: return "CL_MAP_FAILURE";
    case -13: return "CL_MISALIGNED_SUB_BUFFER_OFFSET";
    case -14: return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
    case -15: return "CL_COMPILE_PROGRAM_FAILURE";
    case -16: return "CL_LINKER_NOT_AVAILABLE";
    case -17: return "CL_LINK_PROGRAM_FAILURE";
    case -18: return "CL_DEVICE_PARTITION_FAILED";
    case -19: return "CL_KERNEL_ARG_INFO_NOT_AVAILABLE";
    case -30: return "CL_INVALID_VALUE";
    case -31: return "CL_INVALID_DEVICE_TYPE";
    case -32: return "CL_INVALID_PLATFORM";
    case -33: return "CL_INVALID_DEVICE";
    case -34: return "CL_INVALID_CONTEXT";
    case -35: return "CL_INVALID_QUEUE_PROPERTIES";
    case -36: return "CL_INVALID_COMMAND_QUEUE";
    case -37: return "CL_INVALID_HOST_PTR";
    case -38: return "CL_INVALID_MEM_OBJECT";
    case -39: return "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR";
    case -40: return "CL_INVALID_IMAGE_SIZE";
    case -41: return "CL_INVALID_SAMPLER";
    case -42: return "CL_INVALID_BINARY";
    case -43: return "CL_INVALID_BUILD_OPTIONS";
    case -44: return "CL_INVALID_PROGRAM";
    case -45: return "CL_INVALID_PROGRAM_EXECUTABLE";
    case -46: return "CL_INVALID_KERNEL_NAME";
    case -47: return "CL_INVALID_KERNEL_DEFINITION";
    case -48: return "CL_INVALID_KERNEL";
    case -49: return "CL_INVALID_ARG_INDEX";
    case -50: return "CL_INVALID_ARG_VALUE";
    case -51: return "CL_INVALID_ARG_SIZE";
    case -52: return "CL_INVALID_KERNEL_ARGS";
    case -53: return "CL_INVALID_WORK_DIMENSION";
    case -54: return "CL_INVALID_WORK_GROUP_SIZE";
    case -55: return "CL_INVALID_WORK_ITEM_SIZE";
    case -56: return "CL_INVALID_GLOBAL_OFFSET";
    case -57: return "CL_INVALID_EVENT_WAIT_LIST";
    case -58: return "CL_INVALID_EVENT";
    case -59: return "CL_INVALID_OPERATION";
    case -60: return "CL_INVALID_GL_OBJECT";
    case -61: return "CL_INVALID_BUFFER_SIZE";
    case -62: return "CL_INVALID_MIP_LEVEL";
    case -63: return "CL_INVALID_GLOBAL_WORK_SIZE";
    case -64: return "CL_INVALID_PROPERTY";
    case -65: return "CL_INVALID_IMAGE_DESCRIPTOR";
    case -66: return "CL_INVALID_COMPILER_OPTIONS";
    case -67: return "CL_INVALID_LINKER_OPTIONS";
    case -68: return "CL_INVALID_DEVICE_PARTITION_COUNT";
    case -69: return "CL_INVALID_PIPE_SIZE";
    case -70: return "CL_INVALID_DEVICE_QUEUE";
    case -71: return "CL_INVALID_SPEC_ID";
    case -72: return "CL_MAX_SIZE_RESTRICTION_EXCEEDED";
    case -1000: return "CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "unknown OpenCL error";
    }
}

/* }}} */

/* {{{ state */

/* F2LOOPY_PROFILE (defined with the launches below) */
static int profiling(void);
static double now_seconds(void);
static void profile_add(const char *name, long calls, double total, double kernel,
                        double transfer, unsigned long long up, unsigned long long down);

/* Kernel handles are never freed: f2l_shutdown releases their OpenCL objects and
 * retires them, so that a handle cached by a caller (f2l_kernel_cached) can
 * always be checked against the current generation. */
struct f2l_kernel {
    cl_kernel kernel;
    char *name;
    unsigned long generation;
    struct f2l_kernel *next;
    size_t group_limit;          /* CL_KERNEL_WORK_GROUP_SIZE (0: not asked yet) */
    unsigned long long setter;   /* the f2l_launch that set its arguments last (0: none) */
    /* what its arguments must be (f2l_kernel_signature; NULL: not checked):
     * the text, and per argument 0 (a buffer) or the bytes of a scalar */
    char *signature;
    size_t nsig;
    size_t *sig_bytes;
};

struct program {
    uint64_t hash;
    char *source;
    char *options;
    cl_program program;
    struct f2l_kernel *kernels;
    struct program *next;
};

struct f2l_buffer {
    cl_mem mem;
    size_t size;
};

struct resident {
    const char *host;
    size_t nbytes;
    cl_mem mem;
    unsigned long generation;  /* which upload made it resident (for messages) */
    /* F2LOOPY_CHECK_RESIDENT=1: the host copy at the last upload or download
     * (NULL otherwise), and whether a kernel wrote the device copy since */
    unsigned char *snapshot;
    int device_written;
};

static unsigned long resident_generation;

/* F2LOOPY_CHECK_RESIDENT=1: check the host copies of device-resident arrays
 * at every launch (read once). */
static int check_resident(void)
{
    static int mode = -1;
    if (mode < 0) {
        const char *v = getenv("F2LOOPY_CHECK_RESIDENT");
        mode = v && strcmp(v, "1") == 0;
    }
    return mode;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
    int ready;                 /* 1: context and queue exist; -1: creating them failed */
    int fail_code;
    char *fail_message;
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    char description[512];
    int local_rank;            /* node-local rank the device was chosen for (-1: none) */
    long device_index;         /* index of the device in its platform */
    long ndevices;             /* devices of that platform */
    int pinned;                /* F2LOOPY_DEVICE / PYOPENCL_CTX named the device */
    char choice[768];          /* how the device was chosen (for F2LOOPY_VERBOSE) */
    struct program *programs;
    struct f2l_kernel *retired;
    unsigned long generation;  /* bumped by f2l_shutdown */
    size_t max_items[3];       /* CL_DEVICE_MAX_WORK_ITEM_SIZES (0: not asked yet) */
    unsigned long long launches;  /* f2l_launch objects begun (their ids) */
    struct resident *resident;
    size_t nresident, capresident;
} rt;

/* the node-local rank given to f2l_init_rank (-1: take it from the environment) */
static int rank_request = -1;

/* }}} */

/* {{{ device selection */

/* The selection rules (F2LOOPY_DEVICE, the local rank) are one specification
 * with the Python glue's (f2loopy/glue/devices.py); tests/security/
 * test_sec_device_spec.py runs both on one table:
 * - a part of a selection is an index when it is ASCII digits only (an index
 *   of more than 8 digits matches nothing); otherwise it matches the first
 *   name that contains it, ASCII letters compared without case, every other
 *   byte exactly (whatever the locale);
 * - a selection longer than 255 bytes is an error;
 * - a local rank is 1 to 8 ASCII digits, nothing else. */
#define MAX_SELECTION 255
#define MAX_RANK_DIGITS 8

static int lower_ascii(int c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int contains_ci(const char *haystack, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *h = haystack; *h; h++) {
        size_t i = 0;
        while (i < n && h[i] && lower_ascii((unsigned char)h[i]) ==
               lower_ascii((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return n == 0;
}

/* 1 if `text` is an index (ASCII digits only; *out = -1 for more than 8) */
static int parse_index(const char *text, long *out)
{
    size_t n = 0;
    long v = 0;
    for (; text[n]; n++) {
        if (text[n] < '0' || text[n] > '9')
            return 0;
        if (n < 8)
            v = 10 * v + (text[n] - '0');
    }
    if (!n)
        return 0;
    *out = n <= 8 ? v : -1;
    return 1;
}

/* Pick entry `spec` (an index or a part of a name) among n names; -1 if none. */
/* a == b, ignoring ASCII case */
static int equal_ci(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

static long pick(const char *spec, char names[][256], long n)
{
    long idx;
    if (parse_index(spec, &idx))
        return (idx >= 0 && idx < n) ? idx : -1;
    for (long i = 0; i < n; i++)
        if (contains_ci(names[i], spec))
            return i;
    return -1;
}

static void append(char *buf, size_t size, const char *fmt, ...)
{
    size_t len = strlen(buf);
    if (len + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, size - len, fmt, ap);
    va_end(ap);
}

/* The environment variables that MPI launchers set to the rank of the process
 * among those on its node, in the order they are consulted (a launcher's own
 * variable before Slurm's, which an mpirun inside an allocation inherits). */
static const char *const LOCAL_RANK_VARS[] = {
    "OMPI_COMM_WORLD_LOCAL_RANK",   /* Open MPI */
    "MPI_LOCALRANKID",              /* MPICH (Hydra), Intel MPI */
    "PMI_LOCAL_RANK",               /* PMI-based launchers */
    "MV2_COMM_WORLD_LOCAL_RANK",    /* MVAPICH2 */
    "SLURM_LOCALID",                /* srun */
};

/* A printable, shortened copy of an untrusted string, for messages. */
static void printable(char *out, size_t size, const char *text)
{
    size_t n = 0;
    for (; *text && n + 4 < size; text++)
        out[n++] = (*text >= 0x20 && *text < 0x7f) ? *text : '?';
    if (*text && n + 4 <= size) {
        memcpy(out + n, "...", 3);
        n += 3;
    }
    out[n] = 0;
}

/* The node-local rank from the launcher's environment: *rank = -1 if no
 * variable is set; an error if one holds anything but a non-negative integer. */
static int env_local_rank(int *rank, char *from, size_t size)
{
    *rank = -1;
    for (size_t i = 0; i < sizeof LOCAL_RANK_VARS / sizeof *LOCAL_RANK_VARS; i++) {
        const char *value = getenv(LOCAL_RANK_VARS[i]);
        if (!value || !*value)
            continue;
        long v = 0;
        const char *c = value;
        for (; *c >= '0' && *c <= '9' && c - value < MAX_RANK_DIGITS; c++)
            v = 10 * v + (*c - '0');
        if (*c || c == value) {
            char shown[64];
            printable(shown, sizeof shown, value);
            return fail(F2L_ERROR_NO_DEVICE, "%s='%s' is not a node-local rank (a non-negative "
                        "integer)", LOCAL_RANK_VARS[i], shown);
        }
        *rank = (int)v;
        snprintf(from, size, "%s", LOCAL_RANK_VARS[i]);
        return F2L_OK;
    }
    return F2L_OK;
}

#define MAX_PLATFORMS 16
#define MAX_DEVICES 32

/* Choose platform and device; on failure set the error and return its code. */
static int choose_device(void)
{
    cl_platform_id platforms[MAX_PLATFORMS];
    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(MAX_PLATFORMS, platforms, &np);
    if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (err == CL_SUCCESS && np == 0))
        return fail(F2L_ERROR_NO_DEVICE,
                    "no OpenCL platform found (install an OpenCL driver, e.g. Debian's "
                    "pocl-opencl-icd, and check /etc/OpenCL/vendors)");
    if (err != CL_SUCCESS) {
        fail_cl(err, "clGetPlatformIDs");
        err_code = F2L_ERROR_NO_DEVICE;
        return F2L_ERROR_NO_DEVICE;
    }
    static char pnames[MAX_PLATFORMS][256];
    static char dnames[MAX_DEVICES][256];
    cl_device_id devices[MAX_PLATFORMS][MAX_DEVICES];
    cl_uint nd[MAX_PLATFORMS];
    char listing[2048] = "";
    for (cl_uint p = 0; p < np; p++) {
        /* "name (vendor)": a selection may name either */
        char vendor[128] = "";
        pnames[p][0] = 0;
        clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, 120, pnames[p], NULL);
        clGetPlatformInfo(platforms[p], CL_PLATFORM_VENDOR, sizeof vendor, vendor, NULL);
        if (vendor[0] && !contains_ci(pnames[p], vendor))
            append(pnames[p], sizeof pnames[p], " (%s)", vendor);
        nd[p] = 0;
        if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, MAX_DEVICES, devices[p], &nd[p])
            != CL_SUCCESS)
            nd[p] = 0;
        append(listing, sizeof listing, "%s[%u] %s:", p ? "; " : "", p, pnames[p]);
        for (cl_uint d = 0; d < nd[p]; d++) {
            char name[256] = "";
            clGetDeviceInfo(devices[p][d], CL_DEVICE_NAME, sizeof name, name, NULL);
            append(listing, sizeof listing, " [%u] %s", d, name);
        }
        if (!nd[p])
            append(listing, sizeof listing, " no devices");
    }
    int rank = rank_request;
    char rank_from[64] = "f2l_init_rank";
    if (rank < 0) {
        int st = env_local_rank(&rank, rank_from, sizeof rank_from);
        if (st != F2L_OK)
            return st;
    }
    const char *var = "F2LOOPY_DEVICE";
    const char *spec = getenv(var);
    /* F2LOOPY_DEVICE=gpu, cpu or accelerator: only the devices of that type,
     * then the rule without a selection (the first platform that has one) */
    cl_device_type kind = 0;
    if (spec && (equal_ci(spec, "gpu") || equal_ci(spec, "cpu") ||
                 equal_ci(spec, "accelerator"))) {
        kind = equal_ci(spec, "gpu") ? CL_DEVICE_TYPE_GPU
             : equal_ci(spec, "cpu") ? CL_DEVICE_TYPE_CPU : CL_DEVICE_TYPE_ACCELERATOR;
        for (cl_uint p = 0; p < np; p++)
            if (clGetDeviceIDs(platforms[p], kind, MAX_DEVICES, devices[p], &nd[p])
                != CL_SUCCESS)
                nd[p] = 0;
        char shown[32];
        printable(shown, sizeof shown, spec);
        int any = 0;
        for (cl_uint p = 0; p < np; p++)
            any |= nd[p] > 0;
        if (!any)
            return fail(F2L_ERROR_NO_DEVICE, "F2LOOPY_DEVICE=%s: no OpenCL device of type %s "
                        "(platforms: %s)", shown, shown, listing);
        spec = NULL;
    }
    if (!kind && (!spec || !*spec)) {
        var = "PYOPENCL_CTX";
        spec = getenv(var);
    }
    long pi = -1, di = -1;
    if (spec && strlen(spec) > MAX_SELECTION) {
        char shown_spec[128];
        printable(shown_spec, sizeof shown_spec, spec);
        return fail(F2L_ERROR_NO_DEVICE, "%s=%s: longer than %d bytes", var, shown_spec,
                    MAX_SELECTION);
    }
    if (spec && *spec) {
        char pspec[256], dspec[256] = "";
        snprintf(pspec, sizeof pspec, "%s", spec);
        char *colon = strchr(pspec, ':');
        if (colon) {
            snprintf(dspec, sizeof dspec, "%s", colon + 1);
            *colon = 0;
        }
        /* the selection as messages show it: printable, short (it may hold escapes) */
        char shown_spec[128], shown_part[128];
        printable(shown_spec, sizeof shown_spec, spec);
        printable(shown_part, sizeof shown_part, pspec);
        pi = pick(pspec, pnames, (long)np);
        long ignored;
        for (cl_uint p = 0; pi < 0 && !colon && !parse_index(pspec, &ignored) && p < np; p++) {
            /* a device's name alone: the first device whose name it is part of */
            for (cl_uint d = 0; d < nd[p] && pi < 0; d++) {
                char name[256] = "";
                clGetDeviceInfo(devices[p][d], CL_DEVICE_NAME, sizeof name, name, NULL);
                if (contains_ci(name, pspec)) {
                    pi = (long)p;
                    di = (long)d;
                }
            }
        }
        if (pi < 0)
            return fail(F2L_ERROR_NO_DEVICE, "%s=%s: no OpenCL platform '%s' (platforms: %s)",
                        var, shown_spec, shown_part, listing);
        if (dspec[0]) {
            for (cl_uint d = 0; d < nd[pi]; d++) {
                dnames[d][0] = 0;
                clGetDeviceInfo(devices[pi][d], CL_DEVICE_NAME, sizeof dnames[d], dnames[d],
                                NULL);
            }
            di = pick(dspec, dnames, (long)nd[pi]);
            printable(shown_part, sizeof shown_part, dspec);
            if (di < 0)
                return fail(F2L_ERROR_NO_DEVICE, "%s=%s: platform %s has no device '%s' (%s)",
                            var, shown_spec, pnames[pi], shown_part, listing);
        } else if (nd[pi] == 0) {
            return fail(F2L_ERROR_NO_DEVICE, "%s=%s: platform %s has no devices", var,
                        shown_spec, pnames[pi]);
        }
    } else {
        for (cl_uint p = 0; p < np; p++)
            if (nd[p]) {
                pi = (long)p;
                break;
            }
        if (pi < 0)
            return fail(F2L_ERROR_NO_DEVICE, "no OpenCL device found (platforms: %s)", listing);
    }
    /* one device per rank: the node-local rank modulo the devices of the platform */
    rt.pinned = di >= 0;
    if (di < 0)
        di = (rank > 0 ? rank : 0) % (long)nd[pi];
    rt.local_rank = rank;
    rt.device_index = di;
    rt.ndevices = (long)nd[pi];
    rt.platform = platforms[pi];
    rt.device = devices[pi][di];
    char dname[256] = "";
    clGetDeviceInfo(rt.device, CL_DEVICE_NAME, sizeof dname, dname, NULL);
    snprintf(rt.description, sizeof rt.description, "%s (%s)", dname, pnames[pi]);
    rt.choice[0] = 0;
    if (rank >= 0)
        append(rt.choice, sizeof rt.choice, "local rank %d (from %s)", rank, rank_from);
    else
        append(rt.choice, sizeof rt.choice, "no local rank");
    append(rt.choice, sizeof rt.choice, ": device %ld of %ld of platform '%s'", di, rt.ndevices,
           pnames[pi]);
    if (rt.pinned) {
        char shown[128];
        printable(shown, sizeof shown, spec);
        append(rt.choice, sizeof rt.choice, " (chosen by %s=%s)", var, shown);
    }
    append(rt.choice, sizeof rt.choice, ": %s", dname);
    return F2L_OK;
}

/* F2LOOPY_VERBOSE set to anything but "" or "0" */
static int verbose(void)
{
    const char *v = getenv("F2LOOPY_VERBOSE");
    return v && *v && strcmp(v, "0") != 0;
}

/* Called with the lock held. */
static int init_locked(void)
{
    if (rt.ready == 1)
        return F2L_OK;
    if (rt.ready == -1)
        return f2l_set_error(rt.fail_code, rt.fail_message);
    int st = choose_device();
    cl_int err = CL_SUCCESS;
    if (st == F2L_OK) {
        rt.context = clCreateContext(NULL, 1, &rt.device, NULL, NULL, &err);
        if (err != CL_SUCCESS)
            st = fail_cl(err, "clCreateContext on %s", rt.description);
    }
    if (st == F2L_OK) {
        rt.queue = clCreateCommandQueue(rt.context, rt.device, 0, &err);
        if (err != CL_SUCCESS) {
            st = fail_cl(err, "clCreateCommandQueue on %s", rt.description);
            clReleaseContext(rt.context);
            rt.context = NULL;
        }
    }
    if (st != F2L_OK) {
        /* remember the failure: later calls report it again without retrying */
        rt.ready = -1;
        rt.fail_code = st;
        free(rt.fail_message);
        rt.fail_message = copy_string(f2l_error_message());
        return st;
    }
    rt.ready = 1;
    if (verbose())
        fprintf(stderr, "f2loopy: %s\n", rt.choice);
    return F2L_OK;
}

int f2l_init(void)
{
    pthread_mutex_lock(&lock);
    int st = init_locked();
    pthread_mutex_unlock(&lock);
    return st;
}

int f2l_init_rank(int local_rank)
{
    if (local_rank < 0)
        return fail(F2L_ERROR_ARGUMENT, "f2l_init_rank: the node-local rank %d is negative",
                    local_rank);
    pthread_mutex_lock(&lock);
    int st = F2L_OK;
    if (rt.ready == 1) {
        /* too late to choose: fine if the rank leads to the device in use */
        if (!rt.pinned && local_rank % rt.ndevices != rt.device_index)
            st = fail(F2L_ERROR_ARGUMENT, "f2l_init_rank(%d): the device was already chosen "
                      "(%s); choose it before any other f2loopy call (or after f2l_shutdown)",
                      local_rank, rt.choice);
    } else {
        rank_request = local_rank;
        st = init_locked();
    }
    pthread_mutex_unlock(&lock);
    return st;
}

int f2l_device_choice(int *local_rank, int *index, int *count)
{
    pthread_mutex_lock(&lock);
    int st = init_locked();
    if (local_rank)
        *local_rank = st == F2L_OK ? rt.local_rank : -1;
    if (index)
        *index = st == F2L_OK ? (int)rt.device_index : -1;
    if (count)
        *count = st == F2L_OK ? (int)rt.ndevices : 0;
    pthread_mutex_unlock(&lock);
    return st;
}

int f2l_device_description(char *buf, size_t size)
{
    int st = f2l_init();
    if (size)
        snprintf(buf, size, "%s", st == F2L_OK ? rt.description : "");
    return st;
}

int f2l_finish(void)
{
    int st = f2l_init();
    if (st != F2L_OK)
        return st;
    cl_int err = clFinish(rt.queue);
    if (err != CL_SUCCESS)
        return fail_cl(err, "waiting for the OpenCL queue (clFinish)");
    return F2L_OK;
}

void f2l_shutdown(void)
{
    pthread_mutex_lock(&lock);
    if (rt.queue)
        clFinish(rt.queue);
    for (struct program *p = rt.programs; p;) {
        struct program *next = p->next;
        for (struct f2l_kernel *k = p->kernels; k;) {
            struct f2l_kernel *kn = k->next;
            clReleaseKernel(k->kernel);
            k->kernel = NULL;
            k->next = rt.retired;
            rt.retired = k;
            k = kn;
        }
        clReleaseProgram(p->program);
        free(p->source);
        free(p->options);
        free(p);
        p = next;
    }
    rt.programs = NULL;
    for (size_t i = 0; i < rt.nresident; i++) {
        clReleaseMemObject(rt.resident[i].mem);
        free(rt.resident[i].snapshot);
    }
    free(rt.resident);
    rt.resident = NULL;
    rt.nresident = rt.capresident = 0;
    if (rt.queue)
        clReleaseCommandQueue(rt.queue);
    if (rt.context)
        clReleaseContext(rt.context);
    rt.queue = NULL;
    rt.context = NULL;
    free(rt.fail_message);
    rt.fail_message = NULL;
    rt.ready = 0;
    rt.generation++;
    rt.max_items[0] = rt.max_items[1] = rt.max_items[2] = 0;   /* the next device's */
    pthread_mutex_unlock(&lock);
}

/* }}} */

/* {{{ programs */

static uint64_t fnv1a(uint64_t h, const char *s)
{
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

static int build_locked(const char *source, const char *options, struct program **out)
{
    uint64_t h = fnv1a(14695981039346656037ULL, source);
    h = fnv1a(h ^ 0xffu, options);
    for (struct program *p = rt.programs; p; p = p->next)
        if (p->hash == h && !strcmp(p->source, source) && !strcmp(p->options, options)) {
            *out = p;
            return F2L_OK;
        }
    cl_int err;
    cl_program prog = clCreateProgramWithSource(rt.context, 1, &source, NULL, &err);
    if (err != CL_SUCCESS)
        return fail_cl(err, "creating the OpenCL program (clCreateProgramWithSource)");
    err = clBuildProgram(prog, 1, &rt.device, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        size_t len = 0;
        clGetProgramBuildInfo(prog, rt.device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
        char *log = malloc(len + 1);
        if (log) {
            log[0] = 0;
            clGetProgramBuildInfo(prog, rt.device, CL_PROGRAM_BUILD_LOG, len, log, NULL);
            log[len] = 0;
            /* trim trailing blank lines */
            while (len && isspace((unsigned char)log[len - 1]))
                log[--len] = 0;
        }
        const size_t max_log = 8000;
        if (log && strlen(log) > max_log)
            strcpy(log + max_log - 20, "\n[... log cut]");
        fail_cl(err, "building the OpenCL program for %s with options '%s' failed; build log:"
                "\n%s\n(the code is generated: please report this together with the Fortran "
                "source)", rt.description, options, log && *log ? log : "(empty)");
        free(log);
        clReleaseProgram(prog);
        err_code = F2L_ERROR_BUILD;
        return F2L_ERROR_BUILD;
    }
    struct program *p = calloc(1, sizeof *p);
    if (p) {
        p->source = copy_string(source);
        p->options = copy_string(options);
    }
    if (!p || !p->source || !p->options) {
        if (p) {
            free(p->source);
            free(p->options);
        }
        free(p);
        clReleaseProgram(prog);
        return fail(F2L_ERROR_HOST_MEMORY, "out of host memory caching the OpenCL program");
    }
    p->hash = h;
    p->program = prog;
    p->next = rt.programs;
    rt.programs = p;
    *out = p;
    return F2L_OK;
}

int f2l_kernel_get(const char *source, const char *options, const char *name, f2l_kernel **out)
{
    *out = NULL;
    if (!options)
        options = "";
    pthread_mutex_lock(&lock);
    int st = init_locked();
    struct program *p = NULL;
    if (st == F2L_OK)
        st = build_locked(source, options, &p);
    if (st == F2L_OK) {
        struct f2l_kernel *k;
        for (k = p->kernels; k; k = k->next)
            if (!strcmp(k->name, name))
                break;
        if (!k) {
            cl_int err;
            cl_kernel kernel = clCreateKernel(p->program, name, &err);
            if (err != CL_SUCCESS) {
                st = fail_cl(err, "no kernel '%s' in the OpenCL program (clCreateKernel)", name);
            } else if (!(k = calloc(1, sizeof *k)) || !(k->name = copy_string(name))) {
                free(k);
                k = NULL;
                clReleaseKernel(kernel);
                st = fail(F2L_ERROR_HOST_MEMORY, "out of host memory");
            } else {
                k->kernel = kernel;
                k->generation = rt.generation;
                k->next = p->kernels;
                p->kernels = k;
            }
        }
        *out = k;
    }
    pthread_mutex_unlock(&lock);
    return st;
}

int f2l_kernel_current(const f2l_kernel *kernel)
{
    pthread_mutex_lock(&lock);
    int valid = kernel && kernel->kernel && kernel->generation == rt.generation;
    pthread_mutex_unlock(&lock);
    return valid;
}

int f2l_kernel_cached(f2l_kernel **cache, const char *source, const char *options,
                      const char *name)
{
    pthread_mutex_lock(&lock);
    int valid = *cache && (*cache)->kernel && (*cache)->generation == rt.generation;
    pthread_mutex_unlock(&lock);
    if (valid)
        return F2L_OK;
    int st = f2l_kernel_get(source, options, name, cache);
    if (st != F2L_OK)
        *cache = NULL;
    return st;
}

/* The bytes of a scalar of numpy type `word` (len characters: int8 ...
 * uint64, float32, float64, complex64, complex128), 0 for "buffer", or -1. */
static long signature_word(const char *word, size_t len)
{
    if (len == 6 && !strncmp(word, "buffer", 6))
        return 0;
    static const char *const prefixes[] = {"int", "uint", "float", "complex"};
    for (size_t p = 0; p < sizeof prefixes / sizeof *prefixes; p++) {
        size_t n = strlen(prefixes[p]);
        if (len <= n || len > n + 3 || strncmp(word, prefixes[p], n))
            continue;
        long bits = 0;
        for (size_t i = n; i < len; i++) {
            if (word[i] < '0' || word[i] > '9')
                return -1;
            bits = 10 * bits + (word[i] - '0');
        }
        if (bits == 8 || bits == 16 || bits == 32 || bits == 64 || bits == 128)
            return bits / 8;
    }
    return -1;
}

int f2l_kernel_signature(f2l_kernel *kernel, const char *signature)
{
    if (!kernel || !signature)
        return fail(F2L_ERROR_ARGUMENT, "f2l_kernel_signature: no kernel or no signature");
    pthread_mutex_lock(&lock);
    int st = F2L_OK;
    if (!kernel->signature || strcmp(kernel->signature, signature)) {
        size_t n = 0, len = strlen(signature);
        for (size_t i = 0; i < len; i++)
            if (signature[i] != ' ' && (i == 0 || signature[i - 1] == ' '))
                n++;
        size_t *bytes = calloc(n ? n : 1, sizeof *bytes);
        char *text = copy_string(signature);
        if (!bytes || !text)
            st = fail(F2L_ERROR_HOST_MEMORY, "out of host memory");
        for (size_t i = 0, j = 0; st == F2L_OK && i < len; j++) {
            while (signature[i] == ' ')
                i++;
            size_t end = i;
            while (end < len && signature[end] != ' ')
                end++;
            if (end == i)
                break;
            long b = signature_word(signature + i, end - i);
            if (b < 0)
                st = fail(F2L_ERROR_ARGUMENT, "kernel '%s': '%.*s' in its signature is no "
                          "argument type (buffer, int32, float64, ...)", kernel->name,
                          (int)(end - i > 40 ? 40 : end - i), signature + i);
            else
                bytes[j] = (size_t)b;
            i = end;
        }
        cl_uint count = 0;
        if (st == F2L_OK && kernel->kernel &&
            clGetKernelInfo(kernel->kernel, CL_KERNEL_NUM_ARGS, sizeof count, &count, NULL)
            == CL_SUCCESS && count != n)
            st = fail(F2L_ERROR_ARGUMENT, "kernel '%s' takes %u arguments, but the glue passes "
                      "%zu (the glue and the OpenCL program do not match: translate again)",
                      kernel->name, (unsigned)count, n);
        if (st == F2L_OK) {
            free(kernel->signature);
            free(kernel->sig_bytes);
            kernel->signature = text;
            kernel->sig_bytes = bytes;
            kernel->nsig = n;
        } else {
            free(text);
            free(bytes);
        }
    }
    pthread_mutex_unlock(&lock);
    return st;
}

/* }}} */

/* {{{ buffers */

static int new_mem(size_t nbytes, const void *host, cl_mem *out, const char *what)
{
    cl_int err;
    /* OpenCL buffers cannot be empty */
    cl_mem mem = clCreateBuffer(rt.context, CL_MEM_READ_WRITE, nbytes ? nbytes : 1, NULL, &err);
    if (err != CL_SUCCESS)
        return fail_cl(err, "allocating %zu bytes on %s for %s", nbytes, rt.description, what);
    if (host && nbytes) {
        err = clEnqueueWriteBuffer(rt.queue, mem, CL_TRUE, 0, nbytes, host, 0, NULL, NULL);
        if (err != CL_SUCCESS) {
            clReleaseMemObject(mem);
            return fail_cl(err, "copying %zu bytes of %s to the device", nbytes, what);
        }
    }
    *out = mem;
    return F2L_OK;
}

int f2l_buffer_create(size_t nbytes, const void *host, f2l_buffer **out)
{
    *out = NULL;
    int st = f2l_init();
    if (st != F2L_OK)
        return st;
    f2l_buffer *b = calloc(1, sizeof *b);
    if (!b)
        return fail(F2L_ERROR_HOST_MEMORY, "out of host memory");
    st = new_mem(nbytes, host, &b->mem, "a buffer");
    if (st != F2L_OK) {
        free(b);
        return st;
    }
    b->size = nbytes;
    *out = b;
    return F2L_OK;
}

int f2l_buffer_write(f2l_buffer *b, const void *host, size_t nbytes)
{
    if (nbytes > b->size)
        return fail(F2L_ERROR_ARGUMENT, "writing %zu bytes into a buffer of %zu bytes", nbytes,
                    b->size);
    if (!nbytes)
        return F2L_OK;
    cl_int err = clEnqueueWriteBuffer(rt.queue, b->mem, CL_TRUE, 0, nbytes, host, 0, NULL, NULL);
    return err == CL_SUCCESS ? F2L_OK : fail_cl(err, "writing %zu bytes to the device", nbytes);
}

int f2l_buffer_read(f2l_buffer *b, void *host, size_t nbytes)
{
    if (nbytes > b->size)
        return fail(F2L_ERROR_ARGUMENT, "reading %zu bytes from a buffer of %zu bytes", nbytes,
                    b->size);
    if (!nbytes)
        return F2L_OK;
    cl_int err = clEnqueueReadBuffer(rt.queue, b->mem, CL_TRUE, 0, nbytes, host, 0, NULL, NULL);
    return err == CL_SUCCESS ? F2L_OK : fail_cl(err, "reading %zu bytes from the device", nbytes);
}

size_t f2l_buffer_size(const f2l_buffer *b) { return b ? b->size : 0; }

void f2l_buffer_release(f2l_buffer *b)
{
    if (!b)
        return;
    clReleaseMemObject(b->mem);
    free(b);
}

/* }}} */

/* {{{ device-resident arrays */

/* Remember the host copy of *r* as it is now (checking mode; lock held).
 * The device copy now equals it unless *written_since* (a kernel wrote it). */
static int take_snapshot(struct resident *r, int device_written)
{
    if (!check_resident())
        return F2L_OK;
    if (!r->snapshot && r->nbytes) {
        r->snapshot = malloc(r->nbytes);
        if (!r->snapshot)
            return fail(F2L_ERROR_HOST_MEMORY, "out of host memory (F2LOOPY_CHECK_RESIDENT "
                        "keeps a copy of each device-resident array)");
    }
    if (r->nbytes)
        memcpy(r->snapshot, r->host, r->nbytes);
    r->device_written = device_written;
    return F2L_OK;
}

/* After a transfer of the nbytes at byte *at* of *r* (checking mode; lock
 * held): those bytes of the host copy are now the last transfer's; the rest
 * keep the state of the transfers before (a host change elsewhere is still a
 * change the device copy lacks). */
static int take_snapshot_part(struct resident *r, size_t at, size_t nbytes, int device_written)
{
    if (!check_resident())
        return F2L_OK;
    if (!r->snapshot)
        return take_snapshot(r, device_written);
    memcpy(r->snapshot + at, r->host + at, nbytes);
    r->device_written = device_written;
    return F2L_OK;
}

/* Checking mode: whether the nbytes of argument *name* at the start of
 * resident array *r* are the host copy of the last upload or download, and,
 * while no kernel wrote it, equal to the device copy.  Lock held. */
static int check_host_copy(struct resident *r, const char *name, size_t nbytes)
{
    if (!check_resident() || !r->snapshot || !nbytes)
        return F2L_OK;
    if (memcmp(r->host, r->snapshot, nbytes) != 0)
        return fail(F2L_ERROR_RESIDENT,
                    "argument '%s' is device-resident, but its host copy changed since it was "
                    "last uploaded or downloaded (upload %lu): the kernel would compute from the "
                    "device copy. Upload it again after changing it on the host, or release it "
                    "before deallocating it (an array allocated where it was is not it)",
                    name, r->generation);
    if (r->device_written)
        return F2L_OK;
    unsigned char *device = malloc(nbytes);
    if (!device)
        return fail(F2L_ERROR_HOST_MEMORY, "out of host memory");
    cl_int err = clEnqueueReadBuffer(rt.queue, r->mem, CL_TRUE, 0, nbytes, device, 0, NULL, NULL);
    int st = F2L_OK;
    if (err != CL_SUCCESS)
        st = fail_cl(err, "reading a device-resident array to check it (%zu bytes)", nbytes);
    else if (memcmp(device, r->host, nbytes) != 0)
        st = fail(F2L_ERROR_RESIDENT, "argument '%s' is device-resident, but its host and device "
                  "copies differ though no kernel wrote it since upload %lu", name,
                  r->generation);
    free(device);
    return st;
}

/* Checking mode: whether the nbytes at byte *at* of resident array *r* are, on
 * the host, still what the last upload or download left there.  A download
 * over host bytes changed since would lose the change without a word; the
 * usual cause is a kernel that ran on a copy of the array (the compiler passes
 * a copy through a dummy argument that is neither contiguous nor explicit-shape),
 * whose results the compiler copied back to the host copy.  Lock held. */
static int check_overwrite(const struct resident *r, size_t at, size_t nbytes)
{
    if (!check_resident() || !r->snapshot || !nbytes)
        return F2L_OK;
    if (memcmp(r->host + at, r->snapshot + at, nbytes) != 0)
        return fail(F2L_ERROR_RESIDENT,
                    "a download would overwrite %zu bytes (from byte %zu) of the host copy of a "
                    "device-resident array that changed on the host since it was last uploaded "
                    "or downloaded (upload %lu), losing the change. If a kernel ran on it, it "
                    "ran on a copy: pass a device-resident array whole, through a dummy that is "
                    "contiguous or explicit-shape; upload a part changed on the host before "
                    "the kernel uses it", nbytes, at, r->generation);
    return F2L_OK;
}

/* The resident entry overlapping [host, host+nbytes), or NULL (lock held). */
static struct resident *find_overlap(const char *host, size_t nbytes)
{
    for (size_t i = 0; i < rt.nresident; i++) {
        struct resident *r = &rt.resident[i];
        size_t len = nbytes ? nbytes : 1;
        if (host < r->host + r->nbytes && r->host < host + len)
            return r;
    }
    return NULL;
}

int f2l_resident_upload(const void *host, size_t nbytes)
{
    pthread_mutex_lock(&lock);
    int st = init_locked();
    /* (after the set-up of OpenCL, which the first call does: not a transfer) */
    double profile_t0 = profiling() ? now_seconds() : 0;
    if (st != F2L_OK)
        goto done;
    const char *h = host;
    struct resident *r = find_overlap(h, nbytes);
    if (r && (r->host != h || r->nbytes != nbytes)) {
        st = fail(F2L_ERROR_RESIDENT,
                  "the array (%zu bytes at %p) overlaps a device-resident array of %zu bytes "
                  "at %p without being it; release that one first", nbytes, host, r->nbytes,
                  (const void *)r->host);
        goto done;
    }
    if (r) {
        cl_int err = nbytes ? clEnqueueWriteBuffer(rt.queue, r->mem, CL_TRUE, 0, nbytes, host, 0,
                                                   NULL, NULL) : CL_SUCCESS;
        if (err != CL_SUCCESS)
            st = fail_cl(err, "copying a device-resident array (%zu bytes) to the device", nbytes);
        else
            st = take_snapshot(r, 0);
        goto done;
    }
    if (rt.nresident == rt.capresident) {
        size_t cap = rt.capresident ? 2 * rt.capresident : 16;
        struct resident *grown = realloc(rt.resident, cap * sizeof *grown);
        if (!grown) {
            st = fail(F2L_ERROR_HOST_MEMORY, "out of host memory");
            goto done;
        }
        rt.resident = grown;
        rt.capresident = cap;
    }
    cl_mem mem;
    st = new_mem(nbytes, host, &mem, "a device-resident array");
    if (st != F2L_OK)
        goto done;
    rt.resident[rt.nresident].host = h;
    rt.resident[rt.nresident].nbytes = nbytes;
    rt.resident[rt.nresident].mem = mem;
    rt.resident[rt.nresident].generation = ++resident_generation;
    rt.resident[rt.nresident].snapshot = NULL;
    rt.resident[rt.nresident].device_written = 0;
    rt.nresident++;
    st = take_snapshot(&rt.resident[rt.nresident - 1], 0);
done:
    pthread_mutex_unlock(&lock);
    if (profile_t0 && st == F2L_OK) {
        double dt = now_seconds() - profile_t0;
        profile_add("(f2l_upload, f2l_download)", 1, dt, 0, dt, nbytes, 0);
    }
    return st;
}

int f2l_resident_download(void *host, size_t nbytes)
{
    double profile_t0 = profiling() ? now_seconds() : 0;
    pthread_mutex_lock(&lock);
    int st = F2L_OK;
    struct resident *r = find_overlap(host, nbytes);
    if (!r || r->host != (const char *)host) {
        st = fail(F2L_ERROR_RESIDENT, "the array (%zu bytes at %p) is not device-resident%s",
                  nbytes, host, r ? " (it overlaps one that starts elsewhere)" : "");
    } else if (nbytes > r->nbytes) {
        st = fail(F2L_ERROR_RESIDENT, "the array has %zu bytes but only %zu are device-resident",
                  nbytes, r->nbytes);
    } else if (nbytes && (st = check_overwrite(r, 0, nbytes)) == F2L_OK) {
        cl_int err = clEnqueueReadBuffer(rt.queue, r->mem, CL_TRUE, 0, nbytes, host, 0, NULL,
                                         NULL);
        if (err != CL_SUCCESS)
            st = fail_cl(err, "copying a device-resident array (%zu bytes) to the host", nbytes);
        else if (nbytes == r->nbytes)
            st = take_snapshot(r, 0);
        else
            st = take_snapshot_part(r, 0, nbytes, r->device_written);
    }
    pthread_mutex_unlock(&lock);
    if (profile_t0 && st == F2L_OK) {
        double dt = now_seconds() - profile_t0;
        profile_add("(f2l_upload, f2l_download)", 1, dt, 0, dt, 0, nbytes);
    }
    return st;
}

/* Copy nbytes at host + offset, which lie inside one device-resident array,
 * to (to_device != 0) or from its device copy. */
static int resident_part(char *host, size_t offset, size_t nbytes, int to_device)
{
    double profile_t0 = profiling() ? now_seconds() : 0;
    pthread_mutex_lock(&lock);
    int st = init_locked();
    if (st != F2L_OK)
        goto done;
    uintptr_t start = (uintptr_t)host + offset;
    struct resident *r = NULL;
    for (size_t i = 0; i < rt.nresident && !r; i++) {
        uintptr_t base = (uintptr_t)rt.resident[i].host;
        if (base <= start && start - base <= rt.resident[i].nbytes
            && (start - base < rt.resident[i].nbytes || !nbytes))
            r = &rt.resident[i];
    }
    if (!r) {
        st = fail(F2L_ERROR_RESIDENT, "the section (%zu bytes at %p) is not part of a "
                  "device-resident array (upload the whole array first)", nbytes, (void *)start);
        goto done;
    }
    size_t at = start - (uintptr_t)r->host;
    if (nbytes > r->nbytes - at) {
        st = fail(F2L_ERROR_RESIDENT, "the section (%zu bytes at byte %zu of a device-resident "
                  "array of %zu bytes) runs past its end", nbytes, at, r->nbytes);
        goto done;
    }
    if (!nbytes)
        goto done;
    if (!to_device && (st = check_overwrite(r, at, nbytes)) != F2L_OK)
        goto done;
    cl_int err = to_device
        ? clEnqueueWriteBuffer(rt.queue, r->mem, CL_TRUE, at, nbytes, (void *)start, 0, NULL, NULL)
        : clEnqueueReadBuffer(rt.queue, r->mem, CL_TRUE, at, nbytes, (void *)start, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        st = fail_cl(err, "copying %zu bytes of a device-resident array %s", nbytes,
                     to_device ? "to the device" : "to the host");
    else
        st = take_snapshot_part(r, at, nbytes, r->device_written);
done:
    pthread_mutex_unlock(&lock);
    if (profile_t0 && st == F2L_OK) {
        double dt = now_seconds() - profile_t0;
        profile_add("(f2l_upload_part, ...)", 1, dt, 0, dt, to_device ? nbytes : 0,
                    to_device ? 0 : nbytes);
    }
    return st;
}

int f2l_resident_upload_part(const void *host, size_t offset, size_t nbytes)
{
    return resident_part((char *)host, offset, nbytes, 1);
}

int f2l_resident_download_part(void *host, size_t offset, size_t nbytes)
{
    return resident_part(host, offset, nbytes, 0);
}

int f2l_resident_release(const void *host)
{
    pthread_mutex_lock(&lock);
    int st = F2L_OK;
    size_t i;
    for (i = 0; i < rt.nresident; i++)
        if (rt.resident[i].host == (const char *)host)
            break;
    if (i == rt.nresident) {
        st = fail(F2L_ERROR_RESIDENT, "the array at %p is not device-resident", host);
    } else {
        clReleaseMemObject(rt.resident[i].mem);
        free(rt.resident[i].snapshot);
        rt.resident[i] = rt.resident[--rt.nresident];
    }
    pthread_mutex_unlock(&lock);
    return st;
}

int f2l_resident_query(const void *host)
{
    pthread_mutex_lock(&lock);
    int found = 0;
    for (size_t i = 0; i < rt.nresident; i++)
        if (rt.resident[i].host == (const char *)host)
            found = 1;
    pthread_mutex_unlock(&lock);
    return found;
}

int f2l_resident_query_size(const void *host, size_t nbytes)
{
    pthread_mutex_lock(&lock);
    int found = 0;
    for (size_t i = 0; i < rt.nresident; i++)
        if (rt.resident[i].host == (const char *)host && rt.resident[i].nbytes == nbytes)
            found = 1;
    pthread_mutex_unlock(&lock);
    return found;
}

int f2l_resident_count(void)
{
    pthread_mutex_lock(&lock);
    int n = (int)rt.nresident;
    pthread_mutex_unlock(&lock);
    return n;
}

/* }}} */

/* {{{ layout conversion */

int f2l_relayout(void *host, void *device, size_t elem_size, int ndim, const int64_t *extents,
                 int nterms, const int64_t *terms, int64_t device_elems, int to_device)
{
    int64_t total = 1;
    for (int d = 0; d < ndim; d++) {
        if (extents[d] <= 0)
            return F2L_OK;
        total *= extents[d];
    }
    for (int t = 0; t < nterms; t++) {
        const int64_t *term = terms + 4 * t;
        if (term[0] < 0 || term[0] >= ndim || term[1] <= 0 || term[2] < 0)
            return fail(F2L_ERROR_ARGUMENT, "invalid layout term %d (axis %lld, div %lld, "
                        "mod %lld)", t, (long long)term[0], (long long)term[1],
                        (long long)term[2]);
    }
    int64_t idx[32] = {0};
    if (ndim > 32)
        return fail(F2L_ERROR_ARGUMENT, "too many axes (%d)", ndim);
    char *h = host, *dv = device;
    for (int64_t n = 0; n < total; n++) {
        int64_t off = 0;
        for (int t = 0; t < nterms; t++) {
            const int64_t *term = terms + 4 * t;
            int64_t v = idx[term[0]] / term[1];
            if (term[2])
                v %= term[2];
            off += term[3] * v;
        }
        if (off < 0 || off >= device_elems)
            return fail(F2L_ERROR_ARGUMENT, "layout conversion: element %lld of the host "
                        "array maps to offset %lld outside the %lld device elements",
                        (long long)n, (long long)off, (long long)device_elems);
        if (to_device)
            memcpy(dv + off * elem_size, h + n * elem_size, elem_size);
        else
            memcpy(h + n * elem_size, dv + off * elem_size, elem_size);
        for (int d = 0; d < ndim; d++) {
            if (++idx[d] < extents[d])
                break;
            idx[d] = 0;
        }
    }
    return F2L_OK;
}

/* }}} */

/* {{{ profile (F2LOOPY_PROFILE=1): per kernel at exit, calls, kernel time,
 * bytes copied each way and the time in transfers and in the glue */

#define PROFILE_MAX 256
struct profile_entry {
    char name[128];
    long calls;
    double total, kernel, transfer;
    unsigned long long up, down;
};
static struct profile_entry profile_table[PROFILE_MAX];
static int profile_count;
static int profile_state = -1;      /* -1: not read yet */
static pthread_mutex_t profile_lock = PTHREAD_MUTEX_INITIALIZER;

static int profiling(void)
{
    if (profile_state < 0) {
        const char *v = getenv("F2LOOPY_PROFILE");
        profile_state = v && *v && strcmp(v, "0") != 0;
    }
    return profile_state;
}

static double now_seconds(void)
{
    struct timespec ts;        /* C11's clock: the runtime builds with -std=c11 */
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void profile_report(void)
{
    pthread_mutex_lock(&profile_lock);
    if (profile_count) {
        fprintf(stderr, "f2loopy profile (F2LOOPY_PROFILE=1), per kernel:\n");
        fprintf(stderr, "%-32s %8s %10s %10s %11s %10s %13s %15s\n", "kernel", "calls",
                "total s", "kernel s", "transfer s", "glue s", "MB to device", "MB from device");
        for (int i = 0; i < profile_count; i++) {
            struct profile_entry *e = &profile_table[i];
            double glue = e->total - e->kernel - e->transfer;
            fprintf(stderr, "%-32s %8ld %10.4f %10.4f %11.4f %10.4f %13.3f %15.3f\n", e->name,
                    e->calls, e->total, e->kernel, e->transfer, glue > 0 ? glue : 0.0,
                    (double)e->up / 1e6, (double)e->down / 1e6);
        }
        for (int i = 0; i < profile_count; i++) {
            struct profile_entry *e = &profile_table[i];
            if (e->name[0] != '(' && e->calls && e->transfer > e->kernel &&
                e->transfer > 0.5 * e->total)
                fprintf(stderr, "f2loopy profile: %s: transfers take %.0f%% of its time, more "
                        "than the kernel: keep its arrays on the device (call f2l_upload before "
                        "the loop that calls it, f2l_download after)\n", e->name,
                        100.0 * e->transfer / e->total);
        }
    }
    pthread_mutex_unlock(&profile_lock);
}

/* add one call's (or one transfer's) numbers to the entry *name* */
static void profile_add(const char *name, long calls, double total, double kernel,
                        double transfer, unsigned long long up, unsigned long long down)
{
    pthread_mutex_lock(&profile_lock);
    struct profile_entry *e = NULL;
    for (int i = 0; i < profile_count && !e; i++)
        if (strcmp(profile_table[i].name, name) == 0)
            e = &profile_table[i];
    if (!e && profile_count < PROFILE_MAX) {
        if (profile_count == 0)
            atexit(profile_report);
        e = &profile_table[profile_count++];
        memset(e, 0, sizeof *e);
        for (size_t n = 0; name[n] && n + 1 < sizeof e->name; n++)
            e->name[n] = (name[n] >= 0x20 && name[n] < 0x7f) ? name[n] : '?';
    }
    if (e) {
        e->calls += calls;
        e->total += total;
        e->kernel += kernel;
        e->transfer += transfer;
        e->up += up;
        e->down += down;
    }
    pthread_mutex_unlock(&profile_lock);
}

/* }}} */

/* {{{ launches */

enum { ARG_VALUE, ARG_MEM };

struct launch_arg {
    unsigned index;
    int kind;
    unsigned long version;    /* bumped when f2l_launch_value gives a new value */
    unsigned char value[64];
    size_t size;
    cl_mem mem;
    int owned;            /* release mem at the end */
    void *copy_back;      /* host destination after the kernel (NULL: none) */
    size_t nbytes;
    /* layout-converted arrays */
    char *staging;
    size_t elem_size;
    int ndim, nterms;
    int64_t *extents, *terms, device_elems;
};

/* What one launch sequence set as the arguments of one of its kernels: for
 * argument j, the launch_arg (its position in args) and its version then. */
struct arg_record {
    f2l_kernel *kernel;
    size_t n;
    size_t *position;
    unsigned long *version;
    struct arg_record *next;
};

struct f2l_launch {
    f2l_kernel *kernel;
    int status;
    int waits;            /* something must be copied back: wait for the kernel */
    struct launch_arg *args;
    size_t nargs, cap;
    /* F2LOOPY_PROFILE: when it began, seconds in kernels and transfers, bytes */
    double began, kernel_s, transfer_s;
    unsigned long long up, down;
    unsigned long long id;        /* unique among the launches of this process */
    struct arg_record *records;   /* arguments already set, per kernel */
};

int f2l_launch_begin(f2l_kernel *kernel, f2l_launch **out)
{
    *out = NULL;
    if (!kernel)
        return fail(F2L_ERROR_ARGUMENT, "no kernel given to f2l_launch_begin");
    f2l_launch *L = calloc(1, sizeof *L);
    if (!L)
        return fail(F2L_ERROR_HOST_MEMORY, "out of host memory");
    L->kernel = kernel;
    if (profiling())
        L->began = now_seconds();
    pthread_mutex_lock(&lock);
    L->id = ++rt.launches;
    pthread_mutex_unlock(&lock);
    *out = L;
    return F2L_OK;
}

static struct launch_arg *new_arg(f2l_launch *L, unsigned index)
{
    if (L->nargs == L->cap) {
        size_t cap = L->cap ? 2 * L->cap : 16;
        struct launch_arg *grown = realloc(L->args, cap * sizeof *grown);
        if (!grown) {
            L->status = fail(F2L_ERROR_HOST_MEMORY, "out of host memory");
            return NULL;
        }
        L->args = grown;
        L->cap = cap;
    }
    struct launch_arg *a = &L->args[L->nargs++];
    memset(a, 0, sizeof *a);
    a->index = index;
    return a;
}

int f2l_launch_value(f2l_launch *L, unsigned index, const void *value, size_t size)
{
    if (!L)
        return F2L_ERROR_ARGUMENT;
    if (L->status)
        return L->status;
    if (size > sizeof ((struct launch_arg *)0)->value)
        return L->status = fail(F2L_ERROR_ARGUMENT, "scalar argument %u is too large (%zu bytes)",
                                index, size);
    struct launch_arg *a = NULL;
    for (size_t i = 0; i < L->nargs && !a; i++)     /* set again: a new value */
        if (L->args[i].index == index && L->args[i].kind == ARG_VALUE)
            a = &L->args[i];
    if (!a)
        a = new_arg(L, index);
    if (!a)
        return L->status;
    a->kind = ARG_VALUE;
    memcpy(a->value, value, size);
    a->size = size;
    a->version++;
    return F2L_OK;
}

/* Use the device copy of a resident array, or say why not.  Returns 1 if
 * [host, host+nbytes) is resident (a->mem set), 0 if it does not overlap any
 * resident array, -1 (error set) otherwise.  Lock held. */
static int use_resident(f2l_launch *L, struct launch_arg *a, const char *name, const char *host,
                        size_t nbytes, int mapped, int written)
{
    struct resident *r = find_overlap(host, nbytes);
    if (!r)
        return 0;
    if (r->host != host) {
        L->status = fail(F2L_ERROR_RESIDENT,
                         "argument '%s' overlaps a device-resident array without starting where "
                         "it starts (%td bytes apart): a kernel can use a device-resident array "
                         "only as a whole (pass the whole array, or download and release it "
                         "first)", name, host - r->host);
        return -1;
    }
    if (mapped) {
        L->status = fail(F2L_ERROR_RESIDENT,
                         "argument '%s' is device-resident, but the kernel stores it in another "
                         "layout than Fortran's; release it (pass it from the host) or "
                         "translate without the layout change", name);
        return -1;
    }
    if (nbytes > r->nbytes) {
        L->status = fail(F2L_ERROR_RESIDENT, "argument '%s' needs %zu bytes but only %zu are "
                         "device-resident (upload the whole array)", name, nbytes, r->nbytes);
        return -1;
    }
    int st = check_host_copy(r, name, nbytes);
    if (st != F2L_OK) {
        L->status = st;
        return -1;
    }
    if (written)
        r->device_written = 1;
    a->kind = ARG_MEM;
    a->mem = r->mem;
    a->owned = 0;
    return 1;
}

int f2l_launch_array(f2l_launch *L, unsigned index, const char *name, void *host, size_t nbytes,
                     int written)
{
    if (!L)
        return F2L_ERROR_ARGUMENT;
    if (L->status)
        return L->status;
    struct launch_arg *a = new_arg(L, index);
    if (!a)
        return L->status;
    pthread_mutex_lock(&lock);
    int st = init_locked();
    if (st != F2L_OK) {
        pthread_mutex_unlock(&lock);
        return L->status = st;
    }
    int res = nbytes ? use_resident(L, a, name, host, nbytes, 0, written) : 0;
    pthread_mutex_unlock(&lock);
    if (res < 0)
        return L->status;
    if (res == 1)
        return F2L_OK;
    char what[300];
    snprintf(what, sizeof what, "argument '%s'", name);
    double t0 = L->began ? now_seconds() : 0;
    st = new_mem(nbytes, host, &a->mem, what);
    if (st != F2L_OK)
        return L->status = st;
    if (L->began) {
        L->transfer_s += now_seconds() - t0;
        L->up += nbytes;
    }
    a->kind = ARG_MEM;
    a->owned = 1;
    a->nbytes = nbytes;
    if (written && nbytes) {
        a->copy_back = host;
        L->waits = 1;
    }
    return F2L_OK;
}

int f2l_launch_array_mapped(f2l_launch *L, unsigned index, const char *name, void *host,
                            size_t elem_size, int ndim, const int64_t *extents, int nterms,
                            const int64_t *terms, int64_t device_elems, int written)
{
    if (!L)
        return F2L_ERROR_ARGUMENT;
    if (L->status)
        return L->status;
    struct launch_arg *a = new_arg(L, index);
    if (!a)
        return L->status;
    int64_t host_elems = 1;
    for (int d = 0; d < ndim; d++)
        host_elems *= extents[d] > 0 ? extents[d] : 0;
    size_t host_bytes = (size_t)host_elems * elem_size;
    pthread_mutex_lock(&lock);
    int st = init_locked();
    int res = st == F2L_OK && host_bytes
        ? use_resident(L, a, name, host, host_bytes, 1, written) : 0;
    pthread_mutex_unlock(&lock);
    if (st != F2L_OK)
        return L->status = st;
    if (res < 0)
        return L->status;
    size_t dev_bytes = (size_t)(device_elems > 0 ? device_elems : 0) * elem_size;
    a->staging = calloc(dev_bytes ? dev_bytes : 1, 1);
    a->extents = malloc(sizeof(int64_t) * (ndim ? ndim : 1));
    a->terms = malloc(sizeof(int64_t) * 4 * (nterms ? nterms : 1));
    a->kind = ARG_MEM;   /* so that _end releases what was allocated */
    if (!a->staging || !a->extents || !a->terms)
        return L->status = fail(F2L_ERROR_HOST_MEMORY, "out of host memory");
    memcpy(a->extents, extents, sizeof(int64_t) * ndim);
    memcpy(a->terms, terms, sizeof(int64_t) * 4 * nterms);
    a->elem_size = elem_size;
    a->ndim = ndim;
    a->nterms = nterms;
    a->device_elems = device_elems;
    st = f2l_relayout(host, a->staging, elem_size, ndim, extents, nterms, terms, device_elems, 1);
    if (st != F2L_OK) {
        f2l_prefix_error(name);
        return L->status = st;
    }
    char what[300];
    snprintf(what, sizeof what, "argument '%s'", name);
    double t0 = L->began ? now_seconds() : 0;
    st = new_mem(dev_bytes, a->staging, &a->mem, what);
    if (st != F2L_OK)
        return L->status = st;
    if (L->began) {
        L->transfer_s += now_seconds() - t0;
        L->up += dev_bytes;
    }
    a->owned = 1;
    a->nbytes = dev_bytes;
    if (written && host_bytes) {
        a->copy_back = host;
        L->waits = 1;
    }
    return F2L_OK;
}

int f2l_launch_scalar(f2l_launch *L, unsigned index, void *host, size_t size)
{
    if (!L)
        return F2L_ERROR_ARGUMENT;
    if (L->status)
        return L->status;
    struct launch_arg *a = new_arg(L, index);
    if (!a)
        return L->status;
    int st = f2l_init();
    if (st == F2L_OK)
        st = new_mem(size, host, &a->mem, "a scalar argument");
    if (st != F2L_OK)
        return L->status = st;
    a->kind = ARG_MEM;
    a->owned = 1;
    a->nbytes = size;
    a->copy_back = host;
    L->waits = 1;
    return F2L_OK;
}

int f2l_launch_scratch(f2l_launch *L, unsigned index, size_t nbytes)
{
    if (!L)
        return F2L_ERROR_ARGUMENT;
    if (L->status)
        return L->status;
    struct launch_arg *a = new_arg(L, index);
    if (!a)
        return L->status;
    int st = f2l_init();
    if (st == F2L_OK)
        st = new_mem(nbytes, NULL, &a->mem, "a global temporary");
    if (st != F2L_OK)
        return L->status = st;
    a->kind = ARG_MEM;
    a->owned = 1;
    a->nbytes = nbytes;
    return F2L_OK;
}

/* The type word of argument j (from 0) of kernel's signature, for messages. */
static const char *signature_type(const f2l_kernel *kernel, size_t j, int *len)
{
    const char *s = kernel->signature;
    for (;;) {
        while (*s == ' ')
            s++;
        const char *end = s;
        while (*end && *end != ' ')
            end++;
        if (!j-- || !*end) {
            *len = (int)(end - s);
            return s;
        }
        s = end;
    }
}

/* Argument j (from 0) of kernel, about to be set to a: what the signature
 * says it must be?  Lock held. */
static int check_argument(const f2l_kernel *kernel, size_t j, const struct launch_arg *a)
{
    if (j >= kernel->nsig)
        return fail(F2L_ERROR_ARGUMENT, "kernel '%s': argument %zu given to a kernel of %zu "
                    "(the glue and the OpenCL program do not match: translate again)",
                    kernel->name, j + 1, kernel->nsig);
    size_t want = kernel->sig_bytes[j];
    int is_value = a->kind == ARG_VALUE;
    if (want == 0 && !is_value)
        return F2L_OK;
    if (want != 0 && is_value && a->size == want)
        return F2L_OK;
    if (want == 0)
        return fail(F2L_ERROR_ARGUMENT, "kernel '%s': argument %zu must be a device buffer, not "
                    "a %zu-byte value", kernel->name, j + 1, a->size);
    int len;
    const char *type = signature_type(kernel, j, &len);
    if (!is_value)
        return fail(F2L_ERROR_ARGUMENT, "kernel '%s': argument %zu must be a %.*s scalar, not a "
                    "device buffer", kernel->name, j + 1, len, type);
    return fail(F2L_ERROR_ARGUMENT, "kernel '%s': argument %zu must be a %.*s scalar (%zu "
                "bytes), not a %zu-byte value", kernel->name, j + 1, len, type, want, a->size);
}

/* The record of what L set as the arguments of kernel (created empty). */
static struct arg_record *arg_record_of(f2l_launch *L, f2l_kernel *kernel, size_t n)
{
    struct arg_record *r;
    for (r = L->records; r; r = r->next)
        if (r->kernel == kernel)
            break;
    if (r && r->n != n) {
        /* enqueued with another number of arguments: a fresh record */
        size_t *position = calloc(n ? n : 1, sizeof *position);
        unsigned long *version = calloc(n ? n : 1, sizeof *version);
        if (!position || !version) {
            free(position);
            free(version);
            return NULL;
        }
        free(r->position);
        free(r->version);
        r->position = position;
        r->version = version;
        r->n = n;
        kernel->setter = 0;
    }
    if (r)
        return r;
    r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->position = calloc(n ? n : 1, sizeof *r->position);
    r->version = calloc(n ? n : 1, sizeof *r->version);
    if (!r->position || !r->version) {
        free(r->position);
        free(r->version);
        free(r);
        return NULL;
    }
    r->kernel = kernel;
    r->n = n;
    r->next = L->records;
    L->records = r;
    return r;
}

/* Set the arguments of kernel k (argument j: the one registered with index
 * slots[j], or index j without slots) and enqueue it; lock held.  With slots
 * (the launches of a split kernel), an argument that this launch sequence
 * already set on the kernel and that has not changed since is not set again:
 * in a host loop only the loop's index changes from launch to launch.  That
 * holds while no other sequence set the kernel's arguments in between
 * (kernel->setter), and the memory objects of a sequence live until it ends. */
static int enqueue_locked(f2l_launch *L, f2l_kernel *kernel, const int *slots, int nslots,
                          const int64_t num_groups[3], const int64_t local_size[3])
{
    size_t global[3], local[3];
    int empty = 0;
    for (int d = 0; d < 3; d++) {
        if (num_groups[d] < 0 || local_size[d] < 1)
            return L->status = fail(F2L_ERROR_ARGUMENT, "invalid launch size on axis %d: %lld "
                                    "groups of %lld", d, (long long)num_groups[d],
                                    (long long)local_size[d]);
        if (num_groups[d] == 0)
            empty = 1;
        global[d] = (size_t)num_groups[d] * (size_t)local_size[d];
        local[d] = (size_t)local_size[d];
    }
    cl_kernel k = kernel->kernel;
    cl_int err = CL_SUCCESS;
    size_t count = slots ? (size_t)nslots : L->nargs;
    if (kernel->signature && count != kernel->nsig)
        return L->status = fail(F2L_ERROR_ARGUMENT, "kernel '%s': %zu arguments for a kernel of "
                                "%zu (the glue and the OpenCL program do not match: translate "
                                "again)", kernel->name, count, kernel->nsig);
    if (kernel->signature && !slots) {
        /* arguments by index: each index once (one not given would keep the
         * value an earlier launch set) */
        for (size_t j = 0; j < count; j++)
            for (size_t i = 0; i < j; i++)
                if (L->args[i].index == L->args[j].index)
                    return L->status = fail(F2L_ERROR_ARGUMENT, "kernel '%s': argument %u "
                                            "given twice", kernel->name, L->args[j].index + 1);
    }
    struct arg_record *record = NULL;
    int known = 0;    /* the record says what the kernel's arguments are now */
    if (slots) {
        record = arg_record_of(L, kernel, count);
        if (!record)
            return L->status = fail(F2L_ERROR_HOST_MEMORY, "out of host memory");
        known = kernel->setter == L->id && record->n == count;
        kernel->setter = 0;   /* until every argument below is set */
    }
    for (size_t j = 0; j < count && err == CL_SUCCESS; j++) {
        struct launch_arg *a = NULL;
        size_t position = 0;
        if (slots) {
            position = record->position[j];
            if (known && position < L->nargs && L->args[position].index == (unsigned)slots[j]) {
                a = &L->args[position];
                if (record->version[j] == a->version)
                    continue;       /* set by an earlier launch of this sequence */
            }
            for (size_t i = 0; i < L->nargs && !a; i++)
                if (L->args[i].index == (unsigned)slots[j]) {
                    a = &L->args[i];
                    position = i;
                }
            if (!a)
                return L->status = fail(F2L_ERROR_ARGUMENT, "kernel '%s': no argument was "
                                        "given for slot %d", kernel->name, slots[j]);
        } else {
            a = &L->args[j];
        }
        unsigned index = slots ? (unsigned)j : a->index;
        if (kernel->signature && check_argument(kernel, index, a) != F2L_OK)
            return L->status = F2L_ERROR_ARGUMENT;
        if (a->kind == ARG_VALUE)
            err = clSetKernelArg(k, index, a->size, a->value);
        else
            err = clSetKernelArg(k, index, sizeof(cl_mem), &a->mem);
        if (err != CL_SUCCESS)
            L->status = fail_cl(err, "setting argument %u of kernel '%s' (clSetKernelArg)",
                                index, kernel->name);
        else if (record) {
            record->position[j] = position;
            record->version[j] = a->version;
        }
    }
    if (err == CL_SUCCESS && record)
        kernel->setter = L->id;   /* every argument holds what the record says */
    else if (!slots)
        kernel->setter = 0;
    if (err == CL_SUCCESS && !empty) {
        /* a work-group size computed from the arguments may be too large (the
         * limits are asked once per kernel and device) */
        if (!kernel->group_limit &&
            clGetKernelWorkGroupInfo(k, rt.device, CL_KERNEL_WORK_GROUP_SIZE,
                                     sizeof kernel->group_limit, &kernel->group_limit,
                                     NULL) != CL_SUCCESS)
            kernel->group_limit = 0;
        if (!rt.max_items[0] &&
            clGetDeviceInfo(rt.device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof rt.max_items,
                            rt.max_items, NULL) != CL_SUCCESS)
            rt.max_items[0] = 0;
        size_t limit = kernel->group_limit;
        const size_t *dims = rt.max_items;
        if (limit && dims[0] &&
            (local[0] * local[1] * local[2] > limit || local[0] > dims[0] ||
             local[1] > dims[1] || local[2] > dims[2])) {
            err = CL_INVALID_WORK_GROUP_SIZE;
            L->status = fail(F2L_ERROR_ARGUMENT, "the work-group size %zu x %zu x %zu that the "
                             "arguments give kernel '%s' exceeds the limit of %s (%zu "
                             "work-items, at most %zu x %zu x %zu)", local[0], local[1],
                             local[2], kernel->name, rt.description, limit, dims[0],
                             dims[1], dims[2]);
        }
    }
    double t0 = 0;
    if (err == CL_SUCCESS && !empty && L->began) {
        clFinish(rt.queue);          /* what came before is not this kernel's time */
        t0 = now_seconds();
    }
    if (err == CL_SUCCESS && !empty) {
        err = clEnqueueNDRangeKernel(rt.queue, k, 3, NULL, global, local, 0, NULL, NULL);
        if (err == CL_SUCCESS && L->began) {
            clFinish(rt.queue);
            L->kernel_s += now_seconds() - t0;
        }
        if (err != CL_SUCCESS)
            L->status = fail_cl(err, "launching kernel '%s' on %s with %zu x %zu x %zu groups of "
                                "%zu x %zu x %zu work-items", kernel->name, rt.description,
                                global[0] / local[0], global[1] / local[1], global[2] / local[2],
                                local[0], local[1], local[2]);
    }
    return L->status;
}

int f2l_launch_enqueue(f2l_launch *L, f2l_kernel *kernel, const int *slots, int nslots,
                       const int64_t num_groups[3], const int64_t local_size[3])
{
    if (!L)
        return F2L_ERROR_ARGUMENT;
    if (L->status)
        return L->status;
    if (!kernel)
        return L->status = fail(F2L_ERROR_ARGUMENT, "no kernel given to f2l_launch_enqueue");
    if (nslots < 0)
        return L->status = fail(F2L_ERROR_ARGUMENT, "f2l_launch_enqueue: negative slot count");
    pthread_mutex_lock(&lock);
    enqueue_locked(L, kernel, slots, nslots, num_groups, local_size);
    pthread_mutex_unlock(&lock);
    return L->status;
}

int f2l_launch_complete(f2l_launch *L)
{
    if (!L)
        return F2L_ERROR_ARGUMENT;
    if (L->status)
        return L->status;
    for (size_t i = 0; i < L->nargs; i++) {
        struct launch_arg *a = &L->args[i];
        if (!a->copy_back)
            continue;
        void *dest = a->staging ? (void *)a->staging : a->copy_back;
        double t0 = L->began ? now_seconds() : 0;
        cl_int err = clEnqueueReadBuffer(rt.queue, a->mem, CL_TRUE, 0, a->nbytes, dest, 0, NULL,
                                         NULL);
        if (L->began) {
            L->transfer_s += now_seconds() - t0;
            L->down += a->nbytes;
        }
        if (err != CL_SUCCESS)
            return L->status = fail_cl(err, "copying the results of kernel '%s' back to the host",
                                       L->kernel->name);
        if (a->staging) {
            int st = f2l_relayout(a->copy_back, a->staging, a->elem_size, a->ndim, a->extents,
                                  a->nterms, a->terms, a->device_elems, 0);
            if (st != F2L_OK)
                return L->status = st;
        }
    }
    return F2L_OK;
}

int f2l_launch_run(f2l_launch *L, const int64_t num_groups[3], const int64_t local_size[3])
{
    if (!L)
        return F2L_ERROR_ARGUMENT;
    if (L->status)
        return L->status;
    pthread_mutex_lock(&lock);
    enqueue_locked(L, L->kernel, NULL, 0, num_groups, local_size);
    pthread_mutex_unlock(&lock);
    if (L->status)
        return L->status;
    return f2l_launch_complete(L);
}

void f2l_launch_end(f2l_launch *L)
{
    if (!L)
        return;
    if (L->began && !L->status)
        profile_add(L->kernel->name, 1, now_seconds() - L->began, L->kernel_s, L->transfer_s,
                    L->up, L->down);
    for (size_t i = 0; i < L->nargs; i++) {
        struct launch_arg *a = &L->args[i];
        if (a->kind == ARG_MEM && a->owned && a->mem)
            clReleaseMemObject(a->mem);
        free(a->staging);
        free(a->extents);
        free(a->terms);
    }
    for (struct arg_record *r = L->records; r;) {
        struct arg_record *next = r->next;
        free(r->position);
        free(r->version);
        free(r);
        r = next;
    }
    free(L->args);
    free(L);
}

/* }}} */
