/* gpuscan's C ABI (libgpuscan.so): prefix scans and reductions on GPUs for every language
 * that is not C++. Every call returns a status; on failure, gpuscan_last_error() says why
 * in one line for the calling thread. Thread safety: a device may be used from several
 * threads at once (calls on one device are serialised inside the library); a device must
 * not be closed while another thread uses it. */
#ifndef GPUSCAN_GPUSCAN_H
#define GPUSCAN_GPUSCAN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  GPUSCAN_OK = 0,
  GPUSCAN_USAGE_ERROR = 1,           /* the request is wrong (bad argument, type, size) */
  GPUSCAN_DEVICE_ERROR = 2,          /* no device, or a driver call failed */
  GPUSCAN_FORWARD_PROGRESS_ERROR = 3 /* csdl gave up on a device without forward progress */
} gpuscan_status;

/* The enums that the library takes have int as their underlying type in C++ (in C, an
 * integer type of the same size, passed alike): every int is then a value of the type in
 * the library too, so that a value out of range from a C caller (a cast from a bad integer)
 * is refused with GPUSCAN_USAGE_ERROR rather than being undefined behaviour (UBSan: "load
 * of value 9, which is not a valid value for type 'gpuscan_dtype'"). */
#ifdef __cplusplus
#define GPUSCAN_ENUM_BASE : int
#else
#define GPUSCAN_ENUM_BASE
#endif

typedef enum GPUSCAN_ENUM_BASE {
  GPUSCAN_BACKEND_ANY = 0, /* CUDA if built and a CUDA GPU exists, else the best Vulkan one */
  GPUSCAN_BACKEND_VULKAN = 1,
  GPUSCAN_BACKEND_CUDA = 2
} gpuscan_backend;

typedef enum GPUSCAN_ENUM_BASE {
  GPUSCAN_U32 = 0,
  GPUSCAN_I32,
  GPUSCAN_F32,
  GPUSCAN_U64,
  GPUSCAN_I64,
  GPUSCAN_F64
} gpuscan_dtype;

/* AND, OR and XOR apply to integer types only. */
typedef enum GPUSCAN_ENUM_BASE {
  GPUSCAN_ADD = 0,
  GPUSCAN_MUL,
  GPUSCAN_MIN,
  GPUSCAN_MAX,
  GPUSCAN_AND,
  GPUSCAN_OR,
  GPUSCAN_XOR
} gpuscan_op;

typedef enum GPUSCAN_ENUM_BASE {
  GPUSCAN_INCLUSIVE = 0,
  GPUSCAN_EXCLUSIVE,
  GPUSCAN_REDUCE
} gpuscan_kind;

typedef struct gpuscan_device_s* gpuscan_device;

/* Opens a device: name_or_null picks the first whose name contains it (case-insensitive). */
gpuscan_status gpuscan_device_open(gpuscan_backend backend, const char* name_or_null,
                                   gpuscan_device* out);
/* Opens the CUDA GPU of this ordinal (as cudaSetDevice numbers them). */
gpuscan_status gpuscan_device_open_cuda(int ordinal, gpuscan_device* out);
void gpuscan_device_close(gpuscan_device device);
/* The device's name and backend; valid until the device is closed. */
const char* gpuscan_device_name(gpuscan_device device);
gpuscan_backend gpuscan_device_backend(gpuscan_device device);

/* Host arrays in, host array out: n elements of dtype (one for GPUSCAN_REDUCE). init_or_null
 * points to one element of dtype, or is NULL for the operator's identity. in and out may be
 * the same array (the scan runs on device copies of them). */
gpuscan_status gpuscan_scan_host(gpuscan_device device, gpuscan_dtype dtype, gpuscan_op op,
                                 gpuscan_kind kind, const void* in, void* out, uint64_t n,
                                 const void* init_or_null);

/* A batched scan of host arrays (DESIGN 3f): rows x row_length elements, row after row, each
 * row scanned on its own from init; out holds as many (one per row for GPUSCAN_REDUCE). Every
 * backend; in and out may be the same array, as for gpuscan_scan_host. */
gpuscan_status gpuscan_scan_rows_host(gpuscan_device device, gpuscan_dtype dtype, gpuscan_op op,
                                      gpuscan_kind kind, const void* in, void* out, uint64_t rows,
                                      uint64_t row_length, const void* init_or_null);
/* A segmented scan of host arrays (DESIGN 3f): `segments` segments given by segments + 1
 * CSR offsets (from 0, not decreasing; the last is n, the elements of in), each scanned on
 * its own from init; out holds n elements (one per segment for GPUSCAN_REDUCE, an empty
 * segment's being init). Every backend; bad offsets are a GPUSCAN_USAGE_ERROR. */
gpuscan_status gpuscan_scan_segments_host(gpuscan_device device, gpuscan_dtype dtype, gpuscan_op op,
                                          gpuscan_kind kind, const void* in, void* out,
                                          const int64_t* offsets, uint64_t segments,
                                          const void* init_or_null);
/* CUDA device pointers (aligned to the element size) on the caller's stream (a
 * cudaStream_t; NULL = the legacy default stream), enqueued without synchronising: the
 * result is ready when the stream gets there. init_or_null is a HOST pointer to one element.
 * Out-of-place: in and out must not overlap. The device must be a CUDA device; a scratch
 * workspace per device and scan type is kept and grown as needed (growing it synchronises
 * the device once). */
gpuscan_status gpuscan_cuda_scan(gpuscan_device device, gpuscan_dtype dtype, gpuscan_op op,
                                 gpuscan_kind kind, const void* d_in, void* d_out, uint64_t n,
                                 const void* init_or_null, void* stream);

/* gpuscan_cuda_scan for a batch: rows x row_length elements, each row scanned on its own
 * from init (one output per row for GPUSCAN_REDUCE). */
gpuscan_status gpuscan_cuda_scan_rows(gpuscan_device device, gpuscan_dtype dtype, gpuscan_op op,
                                      gpuscan_kind kind, const void* d_in, void* d_out,
                                      uint64_t rows, uint64_t row_length, const void* init_or_null,
                                      void* stream);
/* gpuscan_cuda_scan for CSR segments: segment s is elements [d_offsets[s], d_offsets[s + 1])
 * of the n at d_in, each scanned on its own from init (one output per segment for
 * GPUSCAN_REDUCE). d_offsets: segments + 1 int64 values in DEVICE memory, 0 first, n last,
 * not decreasing; n and segments below 2^32. Invalid offsets are caught on the device before
 * the scan reads them: the device prints the first bad index and traps, so the stream's next
 * synchronisation fails and the CUDA context is lost (as with a failed device assert). */
gpuscan_status gpuscan_cuda_scan_segments(gpuscan_device device, gpuscan_dtype dtype, gpuscan_op op,
                                          gpuscan_kind kind, const void* d_in, void* d_out,
                                          uint64_t n, const int64_t* d_offsets, uint64_t segments,
                                          const void* init_or_null, void* stream);
/* The CUDA device (its ordinal, as cudaSetDevice numbers them) that holds the memory at
 * d_pointer: what a caller handed only a pointer (CUDA array interface) needs to pick the
 * device for gpuscan_device_open_cuda. A USAGE_ERROR where d_pointer is not CUDA device or
 * managed memory (host memory, say); a DEVICE_ERROR where the build has no CUDA backend. */
gpuscan_status gpuscan_cuda_pointer_device(const void* d_pointer, int* ordinal);

/* The compaction family (DESIGN 3e), single pass with decoupled fallback. */
typedef enum GPUSCAN_ENUM_BASE {
  GPUSCAN_SELECT_IF = 0,     /* x[i] where x[i] <predicate> constant */
  GPUSCAN_SELECT_FLAGGED,    /* x[i] where flags[i] != 0 */
  GPUSCAN_UNIQUE,            /* x[i] where i == 0 or x[i] != x[i-1] */
  GPUSCAN_PARTITION,         /* select_if's, then the rejected x[i] to a second output */
  GPUSCAN_RUN_LENGTH_ENCODE, /* unique's x[i], and each run's length (uint64) to a second output */
  GPUSCAN_PARTITION_FLAGGED  /* select_flagged's, then the unflagged x[i] to a second output */
} gpuscan_compaction;

typedef enum GPUSCAN_ENUM_BASE {
  GPUSCAN_LT = 0,
  GPUSCAN_LE,
  GPUSCAN_GT,
  GPUSCAN_GE,
  GPUSCAN_EQ,
  GPUSCAN_NE
} gpuscan_predicate;

typedef struct {
  gpuscan_compaction compaction;
  gpuscan_dtype dtype;         /* the elements' */
  gpuscan_predicate predicate; /* SELECT_IF and PARTITION: x <predicate> constant */
  gpuscan_dtype flags_dtype;   /* the FLAGGED ones: an integer dtype (u32, i32, u64, i64) */
} gpuscan_compact_spec;

/* A compaction of host arrays: n elements of spec->dtype at in; flags_or_null: n flags of
 * spec->flags_dtype (the FLAGGED operations, else NULL); constant_or_null: one element of
 * spec->dtype (SELECT_IF and PARTITION, else NULL). Writes the kept elements (the selected
 * ones, the run values) in order to the start of out (room for n), and their number to
 * *count; second_or_null: PARTITION's rejected elements in order (room for n elements),
 * RUN_LENGTH_ENCODE's run lengths (room for n uint64), else NULL. Nothing is written unless
 * the call succeeds. */
gpuscan_status gpuscan_compact_host(gpuscan_device device, const gpuscan_compact_spec* spec,
                                    const void* in, const void* flags_or_null, uint64_t n,
                                    const void* constant_or_null, void* out, void* second_or_null,
                                    uint64_t* count);
/* The same on CUDA device pointers (aligned to their element size) and the caller's stream,
 * enqueued without synchronising: the count goes to *d_count (device memory, 8 bytes) when the
 * stream gets there. constant_or_null is a HOST pointer. No output may overlap an input or
 * another output, except that SELECT_IF, SELECT_FLAGGED and UNIQUE run in place with
 * d_out == d_in (the rest of the input stays as it was). A workspace per device, spec and stream is
 * kept and grown as needed, as for gpuscan_cuda_scan. */
gpuscan_status gpuscan_cuda_compact(gpuscan_device device, const gpuscan_compact_spec* spec,
                                    const void* d_in, const void* d_flags_or_null, uint64_t n,
                                    const void* constant_or_null, void* d_out,
                                    void* d_second_or_null, uint64_t* d_count, void* stream);

/* This thread's last failure, "" if none. */
const char* gpuscan_last_error(void);

/* The library's version, "MAJOR.MINOR.PATCH". */
const char* gpuscan_version(void);

#ifdef __cplusplus
}
#endif

#endif /* GPUSCAN_GPUSCAN_H */
