/* f2loopy runtime: a small layer over the OpenCL host API for the code that
 * f2loopy generates (and for people who call its kernels by hand).
 *
 * - One OpenCL context and in-order queue per process, on the device chosen by
 *   the environment variable F2LOOPY_DEVICE (else PYOPENCL_CTX), "P" or "P:D"
 *   where P and D are indices or case-insensitive parts of the platform and
 *   device names.  Default: the first platform that has devices, and there the
 *   device numbered by the process's node-local rank (MPI) modulo their number.
 * - Programs are built once per process: a cache keyed by a hash of the source
 *   and the build options (the text is compared too).
 * - Host arrays can be made device-resident: kernels then use the device copy
 *   in place and nothing is transferred until f2l_resident_download.
 * - Nothing aborts.  Every function returns a status (F2L_OK or one of the
 *   F2L_ERROR_* codes); the message of the last error of the calling thread,
 *   with the OpenCL error name where OpenCL failed, is f2l_error_message().
 */
#ifndef F2LOOPY_RUNTIME_H
#define F2LOOPY_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    F2L_OK = 0,
    F2L_ERROR_NO_DEVICE = 1,   /* no OpenCL platform or device (or the selection matches none) */
    F2L_ERROR_OPENCL = 2,      /* an OpenCL call failed; the message names the error */
    F2L_ERROR_BUILD = 3,       /* the program did not build; the message holds the build log */
    F2L_ERROR_ARGUMENT = 4,    /* an argument does not fit the kernel (size, value, assumption) */
    F2L_ERROR_RESIDENT = 5,    /* misuse of device-resident arrays */
    F2L_ERROR_HOST_MEMORY = 6, /* the host ran out of memory */
    F2L_ERROR_STOP = 7         /* the kernel reached a 'stop', 'error stop' or 'call xerbla' */
};

/* {{{ errors */

/* Message of the calling thread's last error ("" if the last call succeeded). */
const char *f2l_error_message(void);
/* Status code of the calling thread's last error (F2L_OK if none). */
int f2l_error_code(void);
/* OpenCL error code behind the last error (0 if it was not an OpenCL error). */
int f2l_error_cl_code(void);
/* Name of an OpenCL error code, e.g. "CL_INVALID_KERNEL_NAME". */
const char *f2l_cl_error_name(int cl_code);
/* Set the calling thread's error (for glue code that checks its own arguments). */
int f2l_set_error(int code, const char *message);
/* Prepend "prefix: " to the calling thread's error message. */
void f2l_prefix_error(const char *prefix);
void f2l_clear_error(void);

/* }}} */

/* {{{ device */

/* Create the context and queue if not done yet (every function below does it).
 * One device per process: unless F2LOOPY_DEVICE (else PYOPENCL_CTX) names a
 * device ("P:D"), the device is the node-local rank modulo the number of
 * devices of the platform (the first with devices, or the one named "P").  The
 * rank is the one given to f2l_init_rank, else the launcher's: the first set of
 * OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, PMI_LOCAL_RANK,
 * MV2_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID; else 0.  With F2LOOPY_VERBOSE set
 * (not "0"), the choice is printed on standard error when the context is made. */
int f2l_init(void);
/* f2l_init for the process of node-local rank local_rank (>= 0), e.g. its rank
 * in the communicator MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) gives.  Call it
 * before anything else; afterwards it fails unless the rank leads to the
 * device already in use.  The rank stays for a new context after f2l_shutdown. */
int f2l_init_rank(int local_rank);
/* The node-local rank the device was chosen for (-1: none known), the index of
 * the device among those of its platform, and their number (any may be NULL). */
int f2l_device_choice(int *local_rank, int *index, int *count);
/* "device name (platform name)" of the chosen device, into buf (NUL-terminated). */
int f2l_device_description(char *buf, size_t size);
/* Wait until every command enqueued so far has finished. */
int f2l_finish(void);
/* Release every program, kernel and device-resident buffer, the queue and the context.
 * A later call starts again from scratch. */
void f2l_shutdown(void);

/* }}} */

/* {{{ programs */

typedef struct f2l_kernel f2l_kernel;

/* The kernel `name` of the program built from `source` with `options` (both
 * NUL-terminated; options may be NULL).  The program is built on first use and
 * cached for the rest of the process. */
int f2l_kernel_get(const char *source, const char *options, const char *name, f2l_kernel **out);
/* The same, through a cache the caller keeps (initially NULL): nothing is looked
 * up while *cache holds a kernel of the current context (f2l_shutdown makes
 * cached kernels stale: they are looked up again). */
int f2l_kernel_cached(f2l_kernel **cache, const char *source, const char *options,
                      const char *name);
/* 1 if kernel (a handle from f2l_kernel_get or f2l_kernel_cached, or NULL) is
 * a kernel of the current context, so that f2l_kernel_cached would return it
 * unchanged; else 0.  Lets a caller skip building the arguments of
 * f2l_kernel_cached in a loop of launches. */
int f2l_kernel_current(const f2l_kernel *kernel);
/* What the arguments of kernel must be, checked before every launch of it
 * (f2l_launch_run, f2l_launch_enqueue) from now on: one word per argument,
 * separated by spaces, "buffer" or the numpy name of a scalar type ("int32",
 * "float64", "complex128": a scalar's size is checked).  The glue of a
 * generated kernel gives it; NAME_cl.c lists each kernel's.  A kernel whose
 * argument count differs, or a launch giving another count, a value for a
 * buffer, a buffer for a value or a value of another size, or one index
 * twice, is F2L_ERROR_ARGUMENT: never a crash or a wrong answer. */
int f2l_kernel_signature(f2l_kernel *kernel, const char *signature);

/* }}} */

/* {{{ buffers */

typedef struct f2l_buffer f2l_buffer;

/* A device buffer of nbytes bytes, initialised from host if host is not NULL. */
int f2l_buffer_create(size_t nbytes, const void *host, f2l_buffer **out);
int f2l_buffer_write(f2l_buffer *buffer, const void *host, size_t nbytes);
int f2l_buffer_read(f2l_buffer *buffer, void *host, size_t nbytes);
size_t f2l_buffer_size(const f2l_buffer *buffer);
void f2l_buffer_release(f2l_buffer *buffer);

/* }}} */

/* {{{ device-resident host arrays
 *
 * A host array (identified by its address) that is device-resident has a
 * device copy that kernels launched through f2l_launch_* use in place: no
 * transfer happens when it is passed to a kernel, and the host array is stale
 * until f2l_resident_download.  Release it before the host memory is freed. */

/* Make [host, host+nbytes) device-resident, copying it to the device (again,
 * if it already is: the device copy is refreshed from the host). */
int f2l_resident_upload(const void *host, size_t nbytes);
/* Copy the device copy back into the host array (it stays device-resident). */
int f2l_resident_download(void *host, size_t nbytes);
/* Partial transfers, e.g. the halo of a field: copy the nbytes at host + offset,
 * which must lie inside one device-resident array (host may be its start or any
 * address in it), to the device copy or from it.  Blocking: the host memory can
 * be reused on return. */
int f2l_resident_upload_part(const void *host, size_t offset, size_t nbytes);
int f2l_resident_download_part(void *host, size_t offset, size_t nbytes);
/* Forget the device copy (no copy back). */
int f2l_resident_release(const void *host);
/* 1 if host is the start of a device-resident array, else 0. */
int f2l_resident_query(const void *host);
/* 1 if host is the start of a device-resident array of nbytes bytes, else 0
 * (an array allocated where a larger or smaller resident one was is not it). */
int f2l_resident_query_size(const void *host, size_t nbytes);
/* F2LOOPY_CHECK_RESIDENT=1 (read once): every launch that uses a
 * device-resident array checks that its host copy is the one of the last
 * upload or download and, while no kernel wrote it, equal to the device copy;
 * a difference is F2L_ERROR_RESIDENT naming the argument. */
/* Number of device-resident arrays. */
int f2l_resident_count(void);

/* }}} */

/* {{{ launching a kernel
 *
 *   f2l_launch *L;
 *   f2l_launch_begin(kernel, &L);
 *   f2l_launch_value(L, 0, &n, sizeof n);               scalar by value
 *   f2l_launch_array(L, 1, "x", x, n * 4, 0);            array the kernel reads
 *   f2l_launch_array(L, 2, "y", y, n * 4, 1);            array the kernel writes
 *   f2l_launch_run(L, groups, local);                    copies written arrays back
 *   f2l_launch_end(L);                                   always, also after an error
 *
 * Arrays that are device-resident are used in place; the others are copied to
 * a temporary buffer and, if written, back after the kernel.  A launch whose
 * arrays are all device-resident and that writes no scalar returns without
 * waiting for the kernel (f2l_finish waits).  Every function but _end does
 * nothing and returns the first error once one has happened in the launch. */

typedef struct f2l_launch f2l_launch;

int f2l_launch_begin(f2l_kernel *kernel, f2l_launch **out);
int f2l_launch_value(f2l_launch *launch, unsigned index, const void *value, size_t size);
/* `name` is used in messages; written != 0 copies the buffer back into host. */
int f2l_launch_array(f2l_launch *launch, unsigned index, const char *name, void *host,
                     size_t nbytes, int written);
/* A host array stored on the device in another layout (see f2l_relayout). */
int f2l_launch_array_mapped(f2l_launch *launch, unsigned index, const char *name, void *host,
                            size_t elem_size, int ndim, const int64_t *extents, int nterms,
                            const int64_t *terms, int64_t device_elems, int written);
/* A scalar the kernel writes (a one-element buffer); its new value is copied to host. */
int f2l_launch_scalar(f2l_launch *launch, unsigned index, void *host, size_t size);
/* Device memory for a global temporary of the kernel: nbytes, not initialised, not copied. */
int f2l_launch_scratch(f2l_launch *launch, unsigned index, size_t nbytes);
/* Enqueue num_groups[a] * local_size[a] work-items per axis (nothing if a count is 0). */
int f2l_launch_run(f2l_launch *launch, const int64_t num_groups[3], const int64_t local_size[3]);
/* A kernel split at global barriers is several kernels sharing the arguments of
 * one launch (uploaded once): register every argument with its own index (a
 * "slot"), then for each kernel in order f2l_launch_enqueue(L, kernel_k, slots,
 * n, groups, local), where OpenCL argument j of kernel_k is the one given slot
 * slots[j]; f2l_launch_value with a slot already given sets a new value (the
 * index of a host loop); f2l_launch_complete copies back what the kernels wrote. */
int f2l_launch_enqueue(f2l_launch *launch, f2l_kernel *kernel, const int *slots, int nslots,
                       const int64_t num_groups[3], const int64_t local_size[3]);
int f2l_launch_complete(f2l_launch *launch);
void f2l_launch_end(f2l_launch *launch);

/* }}} */

/* {{{ layout conversion
 *
 * A host array with ndim axes of the given extents (Fortran order: axis 0 is
 * fastest) holds element (i_0, ..., i_ndim-1) (zero-based) at the device offset
 *     sum over terms t of  stride_t * ((i_{axis_t} / div_t) mod mod_t)
 * (mod_t == 0: no modulo).  terms holds nterms groups of four int64 values
 * (axis, div, mod, stride).  to_device != 0 scatters host into device (whose
 * other elements are left alone), else gathers device into host.  Fails if an
 * offset falls outside device_elems. */
int f2l_relayout(void *host, void *device, size_t elem_size, int ndim, const int64_t *extents,
                 int nterms, const int64_t *terms, int64_t device_elems, int to_device);

/* }}} */

#ifdef __cplusplus
}
#endif

#endif
