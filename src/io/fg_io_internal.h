/* fg_io_internal.h -- pieces shared by the readers in src/io/ (not part of the public API):
 * a line reader over plain or gzip files and memory buffers, number parsing, the .npy parser
 * and the zip (.npz) container. */
#ifndef FG_IO_INTERNAL_H
#define FG_IO_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <zlib.h>

#include "core/fg_core.h"
#include "io/fg_io.h"

/* Most nodes a graph may have: num_nodes < 2^31 (the CSR keeps 32-bit column ids), so node
 * ids are < FG_IO_MAX_NODES. */
#define FG_IO_MAX_NODES INT64_C(2147483647)
/* Class ids must be below this (a model allocates num_nodes x num_classes logits). */
#define FG_IO_MAX_CLASSES INT64_C(1048576)

/* ---- line reader ---------------------------------------------------------------------- */

/* Reads lines from a file (plain or gzip, told apart by zlib) or from a memory buffer (plain,
 * or gzip when it starts with the gzip magic). Lines are NUL-terminated in place, without the
 * '\n' or a trailing '\r', and stay valid until the next call. */
typedef struct fg_lines {
  const char *name;           /* for messages; not owned */
  gzFile gz;                  /* file source */
  const unsigned char *mem;   /* memory source */
  size_t mem_len, mem_pos;
  z_stream zs;                /* memory gzip source */
  int zs_active, zs_done;
  char *buf;                  /* buffered bytes [pos, end); buf[cap - 1] is room for a NUL */
  size_t cap, pos, end, scan; /* scan: bytes in [pos, scan) hold no '\n' */
  int eof;
  int64_t lineno;             /* number of the line last returned (1-based) */
  int gzip;                   /* the source is gzip data */
  double source_bytes;        /* bytes of the file or buffer as stored (compressed for gzip);
                                 < 0: unknown (a pipe) */
} fg_lines;

/* Open path for reading lines; L->name = path (the caller keeps it alive). */
fg_status fg_lines_open(fg_lines *L, const char *path);
/* Read lines from buf[0, len); gzip data is inflated. */
fg_status fg_lines_open_mem(fg_lines *L, const void *buf, size_t len, const char *name);
/* Read the lines of a piece of a plain text file, buf[0, len) cut at line starts (parallel
 * `prepare`: a rank's byte range), numbered from first_line + 1 as in the file; a piece that
 * starts with the gzip magic is refused (the memory reader would inflate it). */
fg_status fg_lines_open_piece(fg_lines *L, const void *buf, size_t len, const char *name,
                              int64_t first_line);
/* The most bytes the lines can amount to: the source's size, or for gzip data the most that
 * deflate can expand it to (1032:1); 1e300 when the source has no size. */
double fg_lines_max_bytes(const fg_lines *L);
/* Next line in *line (length *len unless len is NULL), or *line = NULL at the end. */
fg_status fg_lines_next(fg_lines *L, char **line, size_t *len);
void fg_lines_close(fg_lines *L);

/* Read a whole regular file into memory (*buf is malloc'ed, free it). */
fg_status fg_file_slurp(const char *path, unsigned char **buf, size_t *len);

/* Append name (fg_printable), item i of a comma-separated list, to out[cap] (cut at cap). */
void fg_list_append(char *out, size_t cap, int64_t i, const char *name);
/* Remove a partly written output, but only a regular file (never a device such as /dev/full). */
void fg_remove_partial(const char *path);

/* The reader's budget (fg_io_set_budget): its limit in bytes (0 = none), whether `bytes` in all
 * would pass it, the bytes an edge costs the load (>= 16), and the limit as messages name it
 * ("--mem-limit is 1.00 GB"). */
double fg_io_limit(void);
int fg_io_over_limit(double bytes);
double fg_io_edge_bytes(void);
const char *fg_io_limit_text(void);
/* How many items of item_bytes each fit beside `held` bytes (INT64_MAX without a limit, 0 when
 * none fit). */
int64_t fg_io_items_allowed(double held, double item_bytes);

/* ---- numbers ---------------------------------------------------------------------------- */

/* Decimal integer at p (leading blanks skipped, optional sign). *end: first byte after the
 * digits. Returns 0 on success, 1 if no digits, 2 on overflow. */
int fg_parse_i64(const char *p, const char **end, int64_t *v);
/* Real number at p (as strtod, with an exact fast path for short decimals). Returns 0 on
 * success, 1 if it is not a number. NaN and Inf are returned as such. */
int fg_parse_f64(const char *p, const char **end, double *v);
/* The token starting at p (up to a byte of stops or the end) through fg_printable into out, for
 * messages. */
const char *fg_token_text(const char *p, const char *stops, char *out, size_t cap);

/* ---- .npy --------------------------------------------------------------------------------- */

#define FG_NPY_MAX_DIMS 8

/* A parsed .npy: a view of the data inside the caller's buffer. */
typedef struct fg_npy {
  char kind;                      /* 'f' float, 'i' signed, 'u' unsigned, 'b' bool; 'S'
                                     bytes and 'U' UCS-4 only from fg_npy_read_text */
  int itemsize;                   /* bytes per element */
  int fortran;                    /* column-major storage */
  int ndim;
  int64_t shape[FG_NPY_MAX_DIMS];
  int64_t count;                  /* product of the shape */
  const unsigned char *data;      /* count * itemsize bytes, little-endian */
  size_t data_offset;             /* where data starts in the .npy (for messages) */
  char descr[32];                 /* the dtype string as written, e.g. "<f4" (fg_printable) */
} fg_npy;

/* Parse a .npy held in buf[0, len): header, dtype and every size against the bytes present. */
fg_status fg_npy_parse(const void *buf, size_t len, const char *name, fg_npy *a);
/* The header of a .npy of total bytes from its first len (<= total): dtype, shape and count,
 * the count checked against total, a->data NULL. For a member whose values are not read. */
fg_status fg_npy_parse_header(const void *buf, size_t len, size_t total, const char *name,
                              fg_npy *a);
/* The one string a .npy holds (shape () or (1,), dtype |Sn or <Un, as scipy.sparse.save_npz
 * writes its format member) into out[cap], NUL-terminated, non-ASCII as '?'; a is the parse.
 * Any other dtype or count fails naming what was found. */
fg_status fg_npy_read_text(const void *buf, size_t len, const char *name, char *out, size_t cap,
                           fg_npy *a);
/* C-order element i of an integer or bool array as int64; *ok = 0 for a uint64 beyond int64. */
int64_t fg_npy_int_at(const fg_npy *a, int64_t i, int *ok);
/* C-order element i of a numeric array as a double (float16 widened; NaN and Inf as they are). */
double fg_npy_real_at(const fg_npy *a, int64_t i);
/* Convert to int64 in C order (integer and bool dtypes only). */
fg_status fg_npy_to_i64(const fg_npy *a, const char *name, int64_t *dst);
/* Convert to float32 in C order (any numeric dtype; float16 widened exactly); NaN/Inf (also
 * after narrowing) rejected, naming the element. */
fg_status fg_npy_to_f32(const fg_npy *a, const char *name, float *dst);
/* The m edges (ev[2e], ev[2e + 1]) of an (E x 2) array into r->src and r->dst (allocated here),
 * every id in [0, n); sets r->num_edges = m and r->num_nodes = the largest id + 1. */
fg_status fg_raw_edge_pairs(const int64_t *ev, int64_t m, int64_t n, const char *name, fg_raw *r);

/* ---- zip (.npz) --------------------------------------------------------------------------- */

typedef struct fg_zip_member {
  char *name;
  char show[72]; /* the name through fg_printable: what messages quote */
  uint64_t csize, usize, local_offset;
  uint32_t crc;
  int method, flags;
} fg_zip_member;

typedef struct fg_zip {
  const unsigned char *buf;
  size_t len;
  const char *name;
  fg_zip_member *members;
  int64_t num_members;
} fg_zip;

/* Parse the end-of-central-directory record (zip64 too) and the central directory. */
fg_status fg_zip_open(const void *buf, size_t len, const char *name, fg_zip *z);
/* Index of the member called name (or -1). */
int64_t fg_zip_find(const fg_zip *z, const char *name);
/* Bytes of member i (stored: a view into the archive, *owned = NULL; deflated: inflated into
 * *owned, which the caller frees). The CRC-32 is verified. A deflated member's declared size,
 * with the held bytes the caller has already, is checked against the reader's budget before
 * anything is allocated (fg_io_set_budget). */
fg_status fg_zip_extract(const fg_zip *z, int64_t i, double held, const unsigned char **data,
                         size_t *len, unsigned char **owned);
void fg_zip_close(fg_zip *z);

/* ---- .npz members (io_npz.c), for the readers of layouts made of .npz archives ------------- */

/* An open .npz: its zip directory, the members extracted so far (kept to fg_npz_close) and the
 * bytes the read holds against the reader's budget (held at open: what the caller holds besides,
 * plus the archive's len). Members are named by base name, "shape" finding shape.npy or shape. */
typedef struct fg_npz fg_npz;
fg_status fg_npz_open(const void *buf, size_t len, const char *name, double held, fg_npz **out);
void fg_npz_close(fg_npz *c);
const char *fg_npz_path(const fg_npz *c);
double fg_npz_held(const fg_npz *c);
int fg_npz_has(const fg_npz *c, const char *base);
/* Parse member base: *label "path[member.npy]" for messages, NULL when absent and not required
 * (required: "path: member base.npy is missing"). */
fg_status fg_npz_get(fg_npz *c, const char *base, int required, fg_npy *a, const char **label);
/* The header of member base (fg_npy_parse_header), a->data NULL: a deflated member is inflated
 * only as far as its header (64 KiB at most), nothing held; a stored one is viewed (and its
 * CRC-32 checked). For members whose values are not read (scipy.sparse's data). */
fg_status fg_npz_get_header(fg_npz *c, const char *base, int required, fg_npy *a,
                            const char **label);
/* The one string member base holds (fg_npy_read_text); required. */
fg_status fg_npz_get_text(fg_npz *c, const char *base, char *out, size_t cap, fg_npy *a,
                          const char **label);
/* Count bytes more against the budget before allocating them (FG_ERR_MEMLIMIT naming label and
 * what they are for), and give them back. */
fg_status fg_npz_hold(fg_npz *c, double bytes, const char *label, const char *what);
void fg_npz_release(fg_npz *c, double bytes);
/* An integer array as int64 (held: fg_npz_release 8 bytes an element when freeing *out). */
fg_status fg_npz_ints(fg_npz *c, const fg_npy *a, const char *label, int64_t **out);
/* A (n,) integer label array into r->labels / r->num_classes (-1: unlabelled; class ids mostly
 * used, fg_raw_check_classes). */
fg_status fg_npz_labels(fg_npz *c, const fg_npy *a, const char *label, int64_t n, fg_raw *r);
/* Hold a dense n x f float32 feature matrix (width and size checked first). */
fg_status fg_npz_hold_dense(fg_npz *c, const char *label, int64_t n, int64_t f);
/* A CSR index pointer of n + 1 entries: 0 first, never decreasing, nnz last. */
fg_status fg_check_indptr(const int64_t *ip, int64_t n, int64_t nnz, const char *label);
/* The members' names, comma-separated ("none" for an empty archive). */
void fg_npz_member_list(const fg_npz *c, char *out, size_t cap);

/* ---- scipy.sparse and the Reddit pair (io_scipy.c) ----------------------------------------- */

/* The pattern of a square scipy.sparse matrix as scipy.sparse.save_npz writes it (members format
 * ('csr', 'csc' or 'coo', |S3 or <U3), shape (2 integers), data (any numeric dtype, one per
 * entry, values ignored: the pattern is the graph), and indptr + indices (int32/int64) or row +
 * col (int32/int64)): out->num_nodes = shape[0], one edge (row -> column) per stored entry,
 * duplicates kept, directed = 1; nothing else set. Everything is checked: the format known,
 * shape two non-negative integers and square, indptr starting at 0, never decreasing and ending
 * at the number of indices, every index in range, the lengths consistent; a missing member is
 * named. buf holds the .npz (stored or deflated members); name is used in messages ("name[member]:
 * element k: ..."). held: bytes the caller holds already, for the reader's budget
 * (fg_io_set_budget), which the edges (fg_io_edge_bytes each) and index copies are checked
 * against before they are allocated. Ready for GraphSAINT's adj_full.npz. */
fg_status fg_read_scipy_sparse_mem(const void *buf, size_t len, const char *name, double held,
                                   fg_raw *out);
/* The same over an open archive whose layout was recognised (format and shape members). */
fg_status fg_npz_scipy_sparse(fg_npz *c, fg_raw *out);

/* "dir/base" in a new allocation (free it), or NULL when out of memory: the file names of a
 * directory layout (OGB's raw/ and split/, GraphSAINT's four files). */
char *fg_path_join(const char *dir, const char *base);

#endif /* FG_IO_INTERNAL_H */
