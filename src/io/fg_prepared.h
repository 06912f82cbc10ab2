/* fg_prepared.h -- the prepared (blocked) dataset's files: the manifest, the node files and the
 * adjacency blocks that `fullgraph prepare` writes and `train DIR` reads (io_prepared.c). What
 * they hold is graph work (graph/graph_prepared.c); this layer only encodes, writes, reads and
 * checks bytes. The format, byte for byte, is in the README ("Prepared datasets").
 *
 *   DIR/manifest.fgprep         the manifest (written last, renamed into place)
 *   DIR/nodes-IIII.bin          row block I: features, node index, file ids, targets, split of
 *                               its rows, in the prepared order
 *   DIR/deg-IIII.bin            row block I: in-degree, out-degree and self loops of its rows
 *                               (what a rank needs of the columns its rows reference)
 *   DIR/adj-IIII-JJJJ.bin       block (I, J) of the pattern: its rows' CSR, block-local columns
 *                               (only blocks holding a nonzero have a file)
 *
 * Every multi-byte value is little-endian. Not collective.
 */
#ifndef FG_PREPARED_H
#define FG_PREPARED_H

#include <stddef.h>
#include <stdint.h>

#include "core/fg_core.h"

#define FG_PREP_MANIFEST "manifest.fgprep"
#define FG_PREP_MAGIC "FGPREP\r\n" /* 8 bytes; the \r\n catches a text-mode transfer */
#define FG_PREP_VERSION 1
#define FG_PREP_HEADER_BYTES 168 /* the fixed part before the arrays */
#define FG_PREP_NAME_BYTES 32    /* a file-table name, NUL-padded */
#define FG_PREP_ENTRY_BYTES 48   /* name, u64 size, u32 crc, u32 zero */
#define FG_PREP_MAX_BLOCKS 1024  /* B: the B x B nonzero table stays within 8 MiB */

/* manifest flags */
#define FG_PREP_SYMMETRIC 1u
#define FG_PREP_FEATURES_GENERATED 2u
#define FG_PREP_LABELS_GENERATED 4u
#define FG_PREP_SPLIT_GENERATED 8u
#define FG_PREP_HAS_IDS 16u /* node files carry each node's file id (a renumbered SNAP list) */
#define FG_PREP_FLAGS_KNOWN 31u

typedef struct fg_prep_file {
  char name[FG_PREP_NAME_BYTES]; /* NUL-terminated within the 32 bytes */
  uint64_t size;
  uint32_t crc; /* zlib's crc32 of the whole file */
} fg_prep_file;

typedef struct fg_prep_manifest {
  uint32_t version, flags;
  int64_t n, nnz;     /* nodes; entries of the pattern */
  int64_t F, C, T;    /* feature width; classes (logits per node); tasks (0: int32 labels) */
  int64_t B;          /* row blocks (and column blocks) */
  uint64_t seed;      /* the order's seed */
  char order[16];     /* the order's name, NUL-terminated */
  int64_t id_span;    /* largest file id + 1 (FG_PREP_HAS_IDS), else 0 */
  int64_t fp_nodes, fp_entries, fp_features, fp_classes; /* the source's fingerprint */
  uint64_t fp_graph, fp_feature_hash, fp_labels, fp_split;
  int64_t *offs;      /* (B + 1) row-block boundaries in the prepared order */
  int64_t *block_nnz; /* (B x B) row-major: entries of block (i, j) */
  int64_t nfiles;
  fg_prep_file *files; /* nodes-0000 .. nodes-(B-1), deg-0000 .., the nonempty blocks
                          row-major */
} fg_prep_manifest;

void fg_prep_manifest_free(fg_prep_manifest *m);

/* A new manifest's header, for the writers (serial and parallel prepare): the format version,
 * the sizes and the order (name of at most 15 characters, its seed), offs and block_nnz
 * allocated (block_nnz zeroed) for the caller to fill; the fingerprint and the files are the
 * caller's. m is zeroed first. */
fg_status fg_prep_manifest_init(fg_prep_manifest *m, uint32_t flags, int64_t n, int64_t nnz,
                                int64_t F, int64_t C, int64_t T, int64_t B, uint64_t seed,
                                const char *order, int64_t id_span);

/* Bytes per node of a node file with m's widths and flags. */
int64_t fg_prep_node_row_bytes(const fg_prep_manifest *m);
/* Byte offsets of the sections of node file i (rows n_i = offs[i+1] - offs[i]): features
 * float32 (n_i x F), index int64 (n_i: the node's index in the source), ids int64 (n_i, when
 * FG_PREP_HAS_IDS), labels int32 (n_i) or targets int8 (n_i x T), split int8 (n_i); sec[5] is
 * the file's size. */
enum { FG_PREP_SEC_FEAT, FG_PREP_SEC_INDEX, FG_PREP_SEC_IDS, FG_PREP_SEC_LABELS,
       FG_PREP_SEC_SPLIT, FG_PREP_SEC_END };
void fg_prep_node_sections(const fg_prep_manifest *m, int64_t rows, int64_t sec[6]);
/* Degree file i: in-degree int64 (n_i), out-degree int64 (n_i), self loops int32 (n_i). */
#define FG_PREP_DEG_ROW_BYTES 20
/* Size of block (i, j)'s file: row offsets int64 (n_i + 1) then columns int32 (nnz_ij). */
int64_t fg_prep_block_bytes(const fg_prep_manifest *m, int64_t i, int64_t j);
/* The file names of m's layout, written into out[FG_PREP_NAME_BYTES]. */
void fg_prep_node_name(int64_t i, char *out);
void fg_prep_deg_name(int64_t i, char *out);
void fg_prep_block_name(int64_t i, int64_t j, char *out);
/* Index in m->files of block (i, j) (-1 for an empty block); node file i is file i, degree
 * file i file B + i. O(B^2): for single look-ups. */
int64_t fg_prep_block_file(const fg_prep_manifest *m, int64_t i, int64_t j);

/* The manifest's bytes (*buf malloc'ed). m->files must be filled. */
fg_status fg_prep_manifest_encode(const fg_prep_manifest *m, unsigned char **buf, size_t *len);
/* Parse and check a manifest held in memory: magic, version, its own CRC, the sizes against
 * each other (boundaries increasing from 0 to n, block nonzeros summing to nnz, the file table
 * naming exactly the files of this layout with the sizes they must have). name is the file
 * for messages. */
fg_status fg_prep_manifest_parse(const void *buf, size_t len, const char *name,
                                 fg_prep_manifest *out);
/* 1 when dir holds a manifest (dir/manifest.fgprep is a file). */
int fg_prep_is_dir(const char *dir);
/* Read and parse dir's manifest. */
fg_status fg_prep_manifest_read(const char *dir, fg_prep_manifest *out);
/* Write the manifest into dir through a temporary renamed into place (fg_out). */
fg_status fg_prep_manifest_write(const char *dir, const fg_prep_manifest *m);

/* FG_ERR_MEMLIMIT naming dir when `bytes` more would pass the load's limit (fg_io_budget). */
fg_status fg_prep_check_fits(const char *dir, double bytes);

/* FG_ERR_INVALID_ARG unless a 1D layout of ranks / rep blocks fits m's B row blocks (it must
 * divide B), naming the rank counts that do; scheme names the layout in the message. */
fg_status fg_prep_check_layout(const fg_prep_manifest *m, const char *dir, int ranks, int rep,
                               const char *scheme);

/* FG_ERR_INVALID_ARG unless every dimension of the 3D grid g (X x Y x Z) divides m's B row
 * blocks, naming the grids of as many ranks that do and the B that would fit this one. */
fg_status fg_prep_check_grid(const fg_prep_manifest *m, const char *dir, const int g[3]);
/* The grids X x Y x Z = P whose dimensions divide m's B, "1x2x2, 2x1x2, ..." ("none"). */
void fg_prep_grids_that_fit(const fg_prep_manifest *m, int64_t P, char *out, size_t cap);

/* Write dir/name from nparts pieces through a temporary renamed into place (fg_out: fsync,
 * rename, directory sync); *size and *crc get what was written. */
fg_status fg_prep_file_write(const char *dir, const char *name, const void *const *parts,
                             const size_t *lens, int nparts, uint64_t *size, uint32_t *crc);
/* Read file m->files[k] of dir whole into *buf (malloc'ed), checking its size and CRC-32:
 * a missing, short, long or corrupt file is refused naming it. */
fg_status fg_prep_file_read(const char *dir, const fg_prep_manifest *m, int64_t k,
                            unsigned char **buf);

/* Open dir/name for reading (pread) after checking its size against the manifest's. */
typedef struct fg_prep_reader {
  int fd;
  char *path;
  uint64_t size;
  uint64_t bytes_read; /* counted, for the per-rank read test */
} fg_prep_reader;
fg_status fg_prep_reader_open(fg_prep_reader *r, const char *dir, const fg_prep_manifest *m,
                              int64_t k);
/* len bytes at off into dst (pread, repeated until done). */
fg_status fg_prep_reader_pread(fg_prep_reader *r, void *dst, size_t len, uint64_t off);
void fg_prep_reader_close(fg_prep_reader *r);

#endif /* FG_PREPARED_H */
