/* The C ABI from a C11 program that sees nothing but gpuscan.h: every dtype through
 * gpuscan_scan_host and the compaction family through gpuscan_compact_host against a
 * reference computed here, and bad requests answered with
 * GPUSCAN_USAGE_ERROR and a message. Exit status 0 when everything held. */
#include <gpuscan/gpuscan.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures = 0;

#define EXPECT(cond, ...)                                    \
  do {                                                       \
    if (!(cond)) {                                           \
      ++failures;                                            \
      fprintf(stderr, "FAILED %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                          \
      fputc('\n', stderr);                                   \
    }                                                        \
  } while (0)

static uint64_t state;
static uint64_t next_random(void) { /* splitmix64 */
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static size_t size_of(gpuscan_dtype dtype) {
  return dtype == GPUSCAN_U32 || dtype == GPUSCAN_I32 || dtype == GPUSCAN_F32 ? 4 : 8;
}

/* Element i of a buffer as double (floats) or as its integer bits (integers). */
static double as_double(gpuscan_dtype dtype, const void* p, size_t i) {
  if (dtype == GPUSCAN_F32) return ((const float*)p)[i];
  return ((const double*)p)[i];
}

static void fill(gpuscan_dtype dtype, void* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = next_random();
    switch (dtype) {
      case GPUSCAN_U32:
        ((uint32_t*)p)[i] = (uint32_t)r;
        break;
      case GPUSCAN_I32:
        ((int32_t*)p)[i] = (int32_t)(r % 2001) - 1000;
        break;
      case GPUSCAN_F32:
        ((float*)p)[i] = (float)(r % 1000) / 100.0f;
        break;
      case GPUSCAN_U64:
        ((uint64_t*)p)[i] = r;
        break;
      case GPUSCAN_I64:
        ((int64_t*)p)[i] = (int64_t)(r % 2000001) - 1000000;
        break;
      case GPUSCAN_F64:
        ((double*)p)[i] = (double)(r % 1000) / 100.0;
        break;
    }
  }
}

/* Sums (integers wrap as unsigned, like the library) of in[0..count). */
static void reference_sum(gpuscan_dtype dtype, const void* in, size_t count, void* sum) {
  uint64_t u = 0;
  double d = 0;
  for (size_t i = 0; i < count; ++i) {
    switch (dtype) {
      case GPUSCAN_U32:
        u = (uint32_t)(u + ((const uint32_t*)in)[i]);
        break;
      case GPUSCAN_I32:
        u = (uint32_t)(u + (uint32_t)((const int32_t*)in)[i]);
        break;
      case GPUSCAN_U64:
        u += ((const uint64_t*)in)[i];
        break;
      case GPUSCAN_I64:
        u += (uint64_t)((const int64_t*)in)[i];
        break;
      default:
        d += as_double(dtype, in, i);
        break;
    }
  }
  if (dtype == GPUSCAN_F32)
    *(float*)sum = (float)d;
  else if (dtype == GPUSCAN_F64)
    *(double*)sum = d;
  else
    memcpy(sum, &u, size_of(dtype));
}

static int same(gpuscan_dtype dtype, const void* got, const void* want, double scale) {
  if (dtype == GPUSCAN_F32 || dtype == GPUSCAN_F64) {
    return fabs(as_double(dtype, got, 0) - as_double(dtype, want, 0)) <= 1e-5 * scale + 1e-6;
  }
  return memcmp(got, want, size_of(dtype)) == 0;
}

static void check_dtype(gpuscan_device device, gpuscan_dtype dtype, size_t n) {
  const size_t e = size_of(dtype);
  unsigned char* in = malloc(n * e + 8);
  unsigned char* out = malloc(n * e + 8);
  unsigned char want[8], sum[8];
  fill(dtype, in, n);
  const double scale = 10.0 * (double)n; /* a bound on the running sums of |x| */

  memset(out, 0xA5, n * e + 8); /* poison */
  gpuscan_status s =
      gpuscan_scan_host(device, dtype, GPUSCAN_ADD, GPUSCAN_INCLUSIVE, in, out, n, NULL);
  EXPECT(s == GPUSCAN_OK, "inclusive dtype %d n %zu: status %d (%s)", dtype, n, s,
         gpuscan_last_error());
  for (size_t i = 0; s == GPUSCAN_OK && i < n; i += 1 + i / 7) {
    reference_sum(dtype, in, i + 1, want);
    EXPECT(same(dtype, out + i * e, want, scale), "inclusive dtype %d n %zu: element %zu wrong",
           dtype, n, i);
  }

  /* Exclusive with init = in[0] (any value of the type). */
  memset(out, 0xA5, n * e + 8);
  s = gpuscan_scan_host(device, dtype, GPUSCAN_ADD, GPUSCAN_EXCLUSIVE, in, out, n, n ? in : NULL);
  EXPECT(s == GPUSCAN_OK, "exclusive dtype %d n %zu: status %d (%s)", dtype, n, s,
         gpuscan_last_error());
  for (size_t i = 0; s == GPUSCAN_OK && i < n; i += 1 + i / 7) {
    /* init + in[0..i) = sum of in[0..i) with in[0] counted twice */
    unsigned char both[16];
    memcpy(both, in, e);
    reference_sum(dtype, in, i, sum);
    memcpy(both + e, sum, e);
    reference_sum(dtype, both, 2, want);
    EXPECT(same(dtype, out + i * e, want, scale), "exclusive dtype %d n %zu: element %zu wrong",
           dtype, n, i);
  }

  memset(out, 0xA5, e);
  s = gpuscan_scan_host(device, dtype, GPUSCAN_ADD, GPUSCAN_REDUCE, in, out, n, NULL);
  EXPECT(s == GPUSCAN_OK, "reduce dtype %d n %zu: status %d (%s)", dtype, n, s,
         gpuscan_last_error());
  reference_sum(dtype, in, n, want);
  EXPECT(s != GPUSCAN_OK || same(dtype, out, want, scale), "reduce dtype %d n %zu wrong", dtype, n);
  free(in);
  free(out);
}

/* The compaction family through gpuscan_compact_host on random u32 data (values in [0, 16):
 * runs and ties), against a reference computed here: select-if (x < 8), select-flagged, unique,
 * partition (x >= 8) and run-length encoding, outputs poisoned first; then bad requests. */
static void check_compaction(gpuscan_device device, size_t n) {
  uint32_t* in = malloc(n * 4 + 4);
  uint32_t* flags = malloc(n * 4 + 4);
  uint32_t* out = malloc(n * 4 + 4);
  uint64_t* second = malloc(n * 8 + 8);
  uint32_t* want = malloc(n * 4 + 4);
  uint64_t* want_lengths = malloc(n * 8 + 8);
  for (size_t i = 0; i < n; ++i) {
    /* Runs: a new value one time in three. */
    in[i] = i > 0 && next_random() % 3 ? in[i - 1] : (uint32_t)(next_random() % 16);
    flags[i] = next_random() % 2 ? (uint32_t)next_random() | 1u : 0u;
  }
  const uint32_t eight = 8;
  for (int op = GPUSCAN_SELECT_IF; op <= GPUSCAN_PARTITION_FLAGGED; ++op) {
    const gpuscan_compact_spec spec = {(gpuscan_compaction)op, GPUSCAN_U32,
                                       op == GPUSCAN_PARTITION ? GPUSCAN_GE : GPUSCAN_LT,
                                       GPUSCAN_U32};
    const int flagged = op == GPUSCAN_SELECT_FLAGGED || op == GPUSCAN_PARTITION_FLAGGED;
    const int predicate = op == GPUSCAN_SELECT_IF || op == GPUSCAN_PARTITION;
    const int two = op == GPUSCAN_PARTITION || op == GPUSCAN_PARTITION_FLAGGED ||
                    op == GPUSCAN_RUN_LENGTH_ENCODE;
    /* The reference: kept elements in order, then (partitions) the rejected ones. */
    size_t kept = 0, run_start = 0;
    for (size_t i = 0; i < n; ++i) {
      int keep = 0;
      if (op == GPUSCAN_SELECT_IF) keep = in[i] < 8;
      if (op == GPUSCAN_PARTITION) keep = in[i] >= 8;
      if (flagged) keep = flags[i] != 0;
      if (op == GPUSCAN_UNIQUE || op == GPUSCAN_RUN_LENGTH_ENCODE)
        keep = i == 0 || in[i] != in[i - 1];
      if (keep) {
        if (op == GPUSCAN_RUN_LENGTH_ENCODE && kept > 0) want_lengths[kept - 1] = i - run_start;
        run_start = i; /* run-length encoding: where the open run began */
        want[kept++] = in[i];
      }
    }
    if (op == GPUSCAN_RUN_LENGTH_ENCODE && kept > 0) want_lengths[kept - 1] = n - run_start;
    memset(out, 0xA5, n * 4 + 4);
    memset(second, 0xA5, n * 8 + 8);
    uint64_t count = 12345;
    const gpuscan_status s =
        gpuscan_compact_host(device, &spec, in, flagged ? flags : NULL, n,
                             predicate ? &eight : NULL, out, two ? second : NULL, &count);
    EXPECT(s == GPUSCAN_OK && count == kept,
           "compaction %d n %zu: status %d count %llu want %zu '%s'", op, n, s,
           (unsigned long long)count, kept, gpuscan_last_error());
    if (s != GPUSCAN_OK || count != kept) continue;
    EXPECT(memcmp(out, want, kept * 4) == 0, "compaction %d n %zu: kept elements wrong", op, n);
    EXPECT(out[kept] == 0xA5A5A5A5u, "compaction %d n %zu: wrote past the count", op, n);
    if (op == GPUSCAN_RUN_LENGTH_ENCODE) {
      EXPECT(memcmp(second, want_lengths, kept * 8) == 0, "rle n %zu: lengths wrong", n);
    } else if (two) {
      /* The rejected elements, in order. */
      const uint32_t* r = (const uint32_t*)second;
      size_t j = 0;
      int ok = 1;
      for (size_t i = 0; i < n; ++i) {
        const int keep = op == GPUSCAN_PARTITION ? in[i] >= 8 : flags[i] != 0;
        if (!keep) ok = ok && r[j++] == in[i];
      }
      EXPECT(ok && j == n - kept, "partition %d n %zu: rejected elements wrong", op, n);
    }
  }
  free(in);
  free(flags);
  free(out);
  free(second);
  free(want);
  free(want_lengths);
}

static void check_compaction_refusals(gpuscan_device device) {
  uint32_t x[4] = {1, 2, 2, 3}, y[4] = {0, 0, 0, 0};
  uint64_t lengths[4], count = 99;
  const uint32_t two = 2;
  const float two_f = 2.0f;
  gpuscan_compact_spec spec = {GPUSCAN_SELECT_IF, GPUSCAN_U32, GPUSCAN_LT, GPUSCAN_U32};
  gpuscan_status s = gpuscan_compact_host(device, &spec, x, NULL, 4, NULL, y, NULL, &count);
  EXPECT(s == GPUSCAN_USAGE_ERROR && strstr(gpuscan_last_error(), "constant") && count == 99 &&
             y[0] == 0,
         "select without a constant: %d '%s'", s, gpuscan_last_error());
  spec.compaction = (gpuscan_compaction)6;
  s = gpuscan_compact_host(device, &spec, x, NULL, 4, &two, y, NULL, &count);
  EXPECT(s == GPUSCAN_USAGE_ERROR && strstr(gpuscan_last_error(), "compaction"),
         "bad compaction: %d '%s'", s, gpuscan_last_error());
  spec.compaction = GPUSCAN_SELECT_FLAGGED;
  s = gpuscan_compact_host(device, &spec, x, NULL, 4, NULL, y, NULL, &count);
  EXPECT(s == GPUSCAN_USAGE_ERROR && strstr(gpuscan_last_error(), "flags"), "no flags: %d '%s'", s,
         gpuscan_last_error());
  spec.flags_dtype = GPUSCAN_F32;
  s = gpuscan_compact_host(device, &spec, x, x, 4, NULL, y, NULL, &count);
  EXPECT(s == GPUSCAN_USAGE_ERROR && strstr(gpuscan_last_error(), "integer"),
         "float flags: %d '%s'", s, gpuscan_last_error());
  spec.compaction = GPUSCAN_PARTITION;
  spec.dtype = GPUSCAN_F32;
  s = gpuscan_compact_host(device, &spec, x, NULL, 4, &two_f, y, NULL, &count);
  EXPECT(s == GPUSCAN_USAGE_ERROR && strstr(gpuscan_last_error(), "second"),
         "partition without its second output: %d '%s'", s, gpuscan_last_error());
  spec.compaction = GPUSCAN_RUN_LENGTH_ENCODE;
  spec.dtype = GPUSCAN_U32;
  s = gpuscan_compact_host(device, &spec, x, NULL, 4, NULL, y, lengths, NULL);
  EXPECT(s == GPUSCAN_USAGE_ERROR && strstr(gpuscan_last_error(), "count"), "NULL count: %d '%s'",
         s, gpuscan_last_error());
  s = gpuscan_compact_host(device, NULL, x, NULL, 4, NULL, y, lengths, &count);
  EXPECT(s == GPUSCAN_USAGE_ERROR && strstr(gpuscan_last_error(), "spec"), "NULL spec: %d '%s'", s,
         gpuscan_last_error());
  s = gpuscan_compact_host(device, &spec, x, NULL, 4, NULL, y, lengths, &count);
  EXPECT(s == GPUSCAN_OK && count == 3 && y[0] == 1 && y[1] == 2 && y[2] == 3 && lengths[0] == 1 &&
             lengths[1] == 2 && lengths[2] == 1,
         "rle of 4: %d count %llu '%s'", s, (unsigned long long)count, gpuscan_last_error());
  s = gpuscan_compact_host(device, &spec, NULL, NULL, 0, NULL, NULL, NULL, &count);
  EXPECT(s == GPUSCAN_OK && count == 0, "rle of nothing: %d count %llu '%s'", s,
         (unsigned long long)count, gpuscan_last_error());
  if (gpuscan_device_backend(device) != GPUSCAN_BACKEND_CUDA) {
    spec.compaction = GPUSCAN_UNIQUE;
    s = gpuscan_cuda_compact(device, &spec, x, NULL, 4, NULL, y, NULL, &count, NULL);
    EXPECT(s != GPUSCAN_OK && gpuscan_last_error()[0] != 0,
           "compaction through CUDA on a Vulkan device: %d", s);
  }
}

int main(void) {
  const char* seed_text = getenv("GPUSCAN_TEST_SEED");
  const uint64_t seed = seed_text ? strtoull(seed_text, NULL, 10) : (uint64_t)time(NULL);
  state = seed;
  printf("GPUSCAN_TEST_SEED=%llu\n", (unsigned long long)seed);

  gpuscan_device device = NULL;
  gpuscan_status s =
      gpuscan_device_open(GPUSCAN_BACKEND_VULKAN, getenv("GPUSCAN_TEST_DEVICE"), &device);
  if (s != GPUSCAN_OK) {
    fprintf(stderr, "no device: %s\n", gpuscan_last_error());
    return 1;
  }
  printf("device: %s (gpuscan %s)\n", gpuscan_device_name(device), gpuscan_version());
  EXPECT(gpuscan_device_backend(device) == GPUSCAN_BACKEND_VULKAN, "backend");

  const size_t sizes[] = {0, 1, 5, 4097, 100003};
  for (int dtype = GPUSCAN_U32; dtype <= GPUSCAN_F64; ++dtype) {
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k)
      check_dtype(device, (gpuscan_dtype)dtype, sizes[k]);
  }

  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) check_compaction(device, sizes[k]);
  check_compaction_refusals(device);

  /* Bad requests: a usage error with a message, and nothing written. */
  uint32_t x[4] = {1, 2, 3, 4}, y[4] = {0, 0, 0, 0};
  s = gpuscan_scan_host(device, (gpuscan_dtype)9, GPUSCAN_ADD, GPUSCAN_INCLUSIVE, x, y, 4, NULL);
  EXPECT(s == GPUSCAN_USAGE_ERROR && strstr(gpuscan_last_error(), "dtype"), "bad dtype: %d '%s'", s,
         gpuscan_last_error());
  EXPECT(y[0] == 0 && y[3] == 0, "a refused scan wrote its output");
  s = gpuscan_scan_host(device, GPUSCAN_F32, GPUSCAN_XOR, GPUSCAN_INCLUSIVE, x, y, 4, NULL);
  EXPECT(s == GPUSCAN_USAGE_ERROR && gpuscan_last_error()[0] != 0, "xor on floats: %d '%s'", s,
         gpuscan_last_error());
  s = gpuscan_scan_host(NULL, GPUSCAN_U32, GPUSCAN_ADD, GPUSCAN_INCLUSIVE, x, y, 4, NULL);
  EXPECT(s == GPUSCAN_USAGE_ERROR, "NULL device: %d", s);
  s = gpuscan_scan_host(device, GPUSCAN_U32, GPUSCAN_ADD, GPUSCAN_INCLUSIVE, NULL, y, 4, NULL);
  EXPECT(s == GPUSCAN_USAGE_ERROR, "NULL input: %d", s);
  s = gpuscan_scan_host(device, GPUSCAN_U32, GPUSCAN_ADD, GPUSCAN_INCLUSIVE, x, y, UINT64_MAX,
                        NULL);
  EXPECT(s == GPUSCAN_USAGE_ERROR, "n = 2^64 - 1: %d '%s'", s, gpuscan_last_error());
  s = gpuscan_cuda_scan(device, GPUSCAN_U32, GPUSCAN_ADD, GPUSCAN_INCLUSIVE, x, y, 4, NULL, NULL);
  EXPECT(s == GPUSCAN_USAGE_ERROR || s == GPUSCAN_DEVICE_ERROR, "cuda scan on a Vulkan device: %d",
         s);
  /* Host memory is no CUDA device's (without a CUDA build or GPU: a device error). */
  int ordinal = 7;
  s = gpuscan_cuda_pointer_device(x, &ordinal);
  EXPECT((s == GPUSCAN_USAGE_ERROR || s == GPUSCAN_DEVICE_ERROR) && ordinal == -1 &&
             gpuscan_last_error()[0] != 0,
         "device of a host pointer: %d, ordinal %d '%s'", s, ordinal, gpuscan_last_error());
  s = gpuscan_cuda_pointer_device(x, NULL);
  EXPECT(s == GPUSCAN_USAGE_ERROR && strstr(gpuscan_last_error(), "ordinal"),
         "NULL ordinal: %d '%s'", s, gpuscan_last_error());
  /* A success clears the message. */
  s = gpuscan_scan_host(device, GPUSCAN_U32, GPUSCAN_ADD, GPUSCAN_INCLUSIVE, x, y, 4, NULL);
  EXPECT(s == GPUSCAN_OK && gpuscan_last_error()[0] == 0 && y[3] == 10, "4 elements: %d", s);
  /* Host arrays may be the same array: the scan runs on device copies of them. */
  s = gpuscan_scan_host(device, GPUSCAN_U32, GPUSCAN_ADD, GPUSCAN_EXCLUSIVE, x, x, 4, NULL);
  EXPECT(s == GPUSCAN_OK && x[0] == 0 && x[1] == 1 && x[2] == 3 && x[3] == 6,
         "in place on the host: %d [%u %u %u %u]", s, x[0], x[1], x[2], x[3]);
  {
    /* Batched: 3 rows of 4, each scanned on its own from init 100; a reduction per row. */
    uint32_t rows_in[12], rows_out[12], sums[3], init = 100;
    for (int i = 0; i < 12; ++i) rows_in[i] = (uint32_t)(i + 1);
    memset(rows_out, 0xA5, sizeof rows_out);
    s = gpuscan_scan_rows_host(device, GPUSCAN_U32, GPUSCAN_ADD, GPUSCAN_INCLUSIVE, rows_in,
                               rows_out, 3, 4, &init);
    EXPECT(s == GPUSCAN_OK && rows_out[0] == 101 && rows_out[3] == 110 && rows_out[4] == 105 &&
               rows_out[11] == 142,
           "rows: %d [%u %u %u %u] '%s'", s, rows_out[0], rows_out[3], rows_out[4], rows_out[11],
           gpuscan_last_error());
    s = gpuscan_scan_rows_host(device, GPUSCAN_U32, GPUSCAN_ADD, GPUSCAN_REDUCE, rows_in, sums, 3,
                               4, NULL);
    EXPECT(s == GPUSCAN_OK && sums[0] == 10 && sums[1] == 26 && sums[2] == 42,
           "row sums: %d [%u %u %u]", s, sums[0], sums[1], sums[2]);
    /* Segments [1..3] [] [4..12], then offsets that decrease. */
    const int64_t offsets[4] = {0, 3, 3, 12}, bad_offsets[3] = {0, 5, 4};
    s = gpuscan_scan_segments_host(device, GPUSCAN_U32, GPUSCAN_ADD, GPUSCAN_INCLUSIVE, rows_in,
                                   rows_out, offsets, 3, &init);
    EXPECT(s == GPUSCAN_OK && rows_out[0] == 101 && rows_out[2] == 106 && rows_out[3] == 104 &&
               rows_out[11] == 172,
           "segments: %d [%u %u %u %u] '%s'", s, rows_out[0], rows_out[2], rows_out[3],
           rows_out[11], gpuscan_last_error());
    s = gpuscan_scan_segments_host(device, GPUSCAN_U32, GPUSCAN_ADD, GPUSCAN_REDUCE, rows_in, sums,
                                   offsets, 3, &init);
    EXPECT(s == GPUSCAN_OK && sums[0] == 106 && sums[1] == 100 && sums[2] == 172,
           "segment sums: %d [%u %u %u] '%s'", s, sums[0], sums[1], sums[2], gpuscan_last_error());
    s = gpuscan_scan_segments_host(device, GPUSCAN_U32, GPUSCAN_ADD, GPUSCAN_INCLUSIVE, rows_in,
                                   rows_out, bad_offsets, 2, NULL);
    EXPECT(s == GPUSCAN_USAGE_ERROR && gpuscan_last_error()[0] != 0, "bad offsets: %d", s);
    s = gpuscan_scan_rows_host(device, GPUSCAN_U32, GPUSCAN_ADD, GPUSCAN_INCLUSIVE, rows_in,
                               rows_out, UINT64_MAX, 2, NULL);
    EXPECT(s == GPUSCAN_USAGE_ERROR && gpuscan_last_error()[0] != 0, "2^64 rows: %d", s);
    if (gpuscan_device_backend(device) != GPUSCAN_BACKEND_CUDA) {
      s = gpuscan_cuda_scan_rows(device, GPUSCAN_U32, GPUSCAN_ADD, GPUSCAN_INCLUSIVE, rows_in,
                                 rows_out, 3, 4, NULL, NULL);
      EXPECT(s != GPUSCAN_OK && gpuscan_last_error()[0] != 0,
             "rows through CUDA on a Vulkan device: %d", s);
    }
  }
  gpuscan_device_close(device);

  s = gpuscan_device_open((gpuscan_backend)7, NULL, &device);
  EXPECT(s == GPUSCAN_USAGE_ERROR && device == NULL, "bad backend: %d", s);

  if (failures)
    fprintf(stderr, "%d checks failed\n", failures);
  else
    printf("all checks passed\n");
  return failures ? 1 : 0;
}
