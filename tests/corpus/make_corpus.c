/* make_corpus.c -- writes the binary part of the reader corpus (tests/corpus/npy, npz): small
 * .npy and .npz files, well-formed and deliberately broken. Run once by make_corpus.sh; the
 * outputs are committed, so neither the build nor the tests need this program.
 *   cc -std=c11 -O1 make_corpus.c -lz -o /tmp/make_corpus && /tmp/make_corpus tests/corpus
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <zlib.h>

typedef struct bytes {
  unsigned char *p;
  size_t n, cap;
} bytes;

static void put(bytes *b, const void *src, size_t n) {
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2 + 64;
    b->p = realloc(b->p, b->cap);
    if (!b->p) exit(1);
  }
  memcpy(b->p + b->n, src, n);
  b->n += n;
}
static void put16(bytes *b, uint32_t v) {
  unsigned char x[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
  put(b, x, 2);
}
static void put32(bytes *b, uint32_t v) {
  unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                        (unsigned char)(v >> 24)};
  put(b, x, 4);
}
static void put64(bytes *b, uint64_t v) {
  put32(b, (uint32_t)v);
  put32(b, (uint32_t)(v >> 32));
}

static const char *outdir;

static void save(const char *rel, const void *p, size_t n) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", outdir, rel);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(1);
  }
}

/* A .npy (version major.0) with the given header dict, padded as numpy pads it. */
static bytes npy(int major, const char *dict, const void *data, size_t n) {
  bytes b = {0};
  size_t pre = major == 1 ? 10 : 12;
  size_t dl = strlen(dict);
  size_t total = (pre + dl + 1 + 63) / 64 * 64;
  size_t hlen = total - pre;
  put(&b, "\x93NUMPY", 6);
  unsigned char ver[2] = {(unsigned char)major, 0};
  put(&b, ver, 2);
  if (major == 1) put16(&b, (uint32_t)hlen);
  else put32(&b, (uint32_t)hlen);
  put(&b, dict, dl);
  for (size_t i = dl; i + 1 < hlen; i++) put(&b, " ", 1);
  put(&b, "\n", 1);
  if (n) put(&b, data, n);
  return b;
}

static void save_npy(const char *rel, int major, const char *dict, const void *data, size_t n) {
  bytes b = npy(major, dict, data, n);
  save(rel, b.p, b.n);
  free(b.p);
}

/* ---- zip writer ---------------------------------------------------------------------------- */

typedef struct member {
  char name[64];
  uint32_t crc, csize, usize, offset;
  int method;
  int zip64; /* write 0xFFFFFFFF sizes/offset in the central directory plus a zip64 extra */
} member;

typedef struct zipw {
  bytes b;
  member m[16];
  int n;
} zipw;

enum { Z_PLAIN = 0, Z_BADCRC = 1, Z_FLIP = 2, Z_FLIP0 = 4 };

static void zip_add(zipw *z, const char *name, const bytes *data, int method, int flags) {
  member *m = &z->m[z->n++];
  snprintf(m->name, sizeof m->name, "%s", name);
  m->method = method;
  m->usize = (uint32_t)data->n;
  m->crc = (uint32_t)crc32(0, data->p, (uInt)data->n);
  if (flags & Z_BADCRC) m->crc ^= 0x5a5a5a5au;
  bytes comp = {0};
  if (method == 8 || method == 12) { /* 12 (bzip2) is only a label: the data is deflate */
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    deflateInit2(&zs, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    unsigned char out[1 << 16];
    zs.next_in = data->p;
    zs.avail_in = (uInt)data->n;
    int r;
    do {
      zs.next_out = out;
      zs.avail_out = sizeof out;
      r = deflate(&zs, Z_FINISH);
      put(&comp, out, sizeof out - zs.avail_out);
    } while (r != Z_STREAM_END);
    deflateEnd(&zs);
  } else {
    put(&comp, data->p, data->n);
  }
  if (flags & Z_FLIP) comp.p[comp.n / 2] ^= 0xff;
  if (flags & Z_FLIP0) comp.p[0] ^= 0xff;
  m->csize = (uint32_t)comp.n;
  m->offset = (uint32_t)z->b.n;
  size_t nl = strlen(name);
  put32(&z->b, 0x04034b50u);
  put16(&z->b, 20);
  put16(&z->b, 0);
  put16(&z->b, (uint32_t)method);
  put16(&z->b, 0);
  put16(&z->b, 0x21);
  put32(&z->b, m->crc);
  put32(&z->b, m->csize);
  put32(&z->b, m->usize);
  put16(&z->b, (uint32_t)nl);
  put16(&z->b, 0);
  put(&z->b, name, nl);
  put(&z->b, comp.p, comp.n);
  free(comp.p);
}

static void zip_finish(zipw *z, const char *rel, int zip64_eocd) {
  uint32_t cd_off = (uint32_t)z->b.n;
  for (int i = 0; i < z->n; i++) {
    member *m = &z->m[i];
    size_t nl = strlen(m->name);
    put32(&z->b, 0x02014b50u);
    put16(&z->b, 0x031e);
    put16(&z->b, m->zip64 ? 45 : 20);
    put16(&z->b, 0);
    put16(&z->b, (uint32_t)m->method);
    put16(&z->b, 0);
    put16(&z->b, 0x21);
    put32(&z->b, m->crc);
    put32(&z->b, m->zip64 ? 0xFFFFFFFFu : m->csize);
    put32(&z->b, m->zip64 ? 0xFFFFFFFFu : m->usize);
    put16(&z->b, (uint32_t)nl);
    put16(&z->b, m->zip64 ? 28 : 0);
    put16(&z->b, 0);
    put16(&z->b, 0);
    put16(&z->b, 0);
    put32(&z->b, 0x81800000u);
    put32(&z->b, m->zip64 ? 0xFFFFFFFFu : m->offset);
    put(&z->b, m->name, nl);
    if (m->zip64) {
      put16(&z->b, 1);
      put16(&z->b, 24);
      put64(&z->b, m->usize);
      put64(&z->b, m->csize);
      put64(&z->b, m->offset);
    }
  }
  uint32_t cd_size = (uint32_t)z->b.n - cd_off;
  if (zip64_eocd) {
    uint64_t z64 = z->b.n;
    put32(&z->b, 0x06064b50u);
    put64(&z->b, 44);
    put16(&z->b, 45);
    put16(&z->b, 45);
    put32(&z->b, 0);
    put32(&z->b, 0);
    put64(&z->b, (uint64_t)z->n);
    put64(&z->b, (uint64_t)z->n);
    put64(&z->b, cd_size);
    put64(&z->b, cd_off);
    put32(&z->b, 0x07064b50u);
    put32(&z->b, 0);
    put64(&z->b, z64);
    put32(&z->b, 1);
  }
  put32(&z->b, 0x06054b50u);
  put16(&z->b, 0);
  put16(&z->b, 0);
  put16(&z->b, zip64_eocd ? 0xFFFFu : (uint32_t)z->n);
  put16(&z->b, zip64_eocd ? 0xFFFFu : (uint32_t)z->n);
  put32(&z->b, zip64_eocd ? 0xFFFFFFFFu : cd_size);
  put32(&z->b, zip64_eocd ? 0xFFFFFFFFu : cd_off);
  put16(&z->b, 0);
  save(rel, z->b.p, z->b.n);
  free(z->b.p);
  memset(z, 0, sizeof *z);
}

/* ---- the two layouts ------------------------------------------------------------------------ */

/* A 5-node CSR graph (gnn_benchmark layout): 0->1, 0->2, 1->2, 3->4, 4->0, 2->0. */
typedef struct csr_opts {
  int method;
  int drop_shape;       /* leave adj_shape out */
  int bad_indptr;       /* indptr decreases */
  int bad_index;        /* an index == n */
  int bad_label;        /* label -5 */
  int nan_attr;         /* NaN in attr_data */
  int bad_crc, flip;    /* damage adj_indices */
  int flip0;            /* damage the first byte of adj_indices */
  int bomb;             /* claim a huge size for a deflated member */
  int zip64;            /* zip64 extras and zip64 end record */
  int attr_matrix;      /* dense attr_matrix instead of CSR attributes */
  int huge_attr_shape;  /* attr_shape (5, 2^30) */
} csr_opts;

static void csr_npz(const char *rel, csr_opts o) {
  zipw z = {0};
  int32_t indptr[6] = {0, 2, 3, 4, 5, 6};
  int32_t indices[6] = {1, 2, 2, 0, 4, 0};
  float adj[6] = {1, 1, 1, 1, 1, 1};
  int64_t shape[2] = {5, 5};
  if (o.bad_indptr) indptr[2] = 1;
  if (o.bad_index) indices[3] = 5;
  bytes b;
#define ADD(name, dict, arr, sz, fl)                    \
  do {                                                  \
    b = npy(1, dict, arr, sz);                          \
    zip_add(&z, name, &b, o.method, fl);                \
    z.m[z.n - 1].zip64 = o.zip64;                       \
    free(b.p);                                          \
  } while (0)
  ADD("adj_data.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", adj,
      sizeof adj, 0);
  ADD("adj_indices.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (6,), }", indices,
      sizeof indices,
      (o.bad_crc ? Z_BADCRC : 0) | (o.flip ? Z_FLIP : 0) | (o.flip0 ? Z_FLIP0 : 0));
  ADD("adj_indptr.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (6,), }", indptr,
      sizeof indptr, 0);
  if (!o.drop_shape)
    ADD("adj_shape.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", shape,
        sizeof shape, 0);
  if (o.attr_matrix) {
    float am[5][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 0}, {0.5f, 0, 2}};
    ADD("attr_matrix.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (5, 3), }", am,
        sizeof am, 0);
  } else {
    /* features 5 x 3: row i has (i % 3) -> 1, row 4 also column 2 -> 2.5 */
    int64_t aptr[6] = {0, 1, 2, 3, 4, 6};
    int64_t aind[6] = {0, 1, 2, 0, 1, 2};
    float adat[6] = {1, 1, 1, 1, 1, 2.5f};
    int64_t ash[2] = {5, o.huge_attr_shape ? (int64_t)1 << 30 : 3};
    if (o.nan_attr) memcpy(&adat[2], "\x00\x00\xc0\x7f", 4);
    ADD("attr_data.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", adat,
        sizeof adat, 0);
    ADD("attr_indices.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (6,), }", aind,
        sizeof aind, 0);
    ADD("attr_indptr.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (6,), }", aptr,
        sizeof aptr, 0);
    ADD("attr_shape.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", ash,
        sizeof ash, 0);
  }
  int8_t labels[5] = {0, 1, 2, 1, 0};
  if (o.bad_label) labels[4] = -5;
  ADD("labels.npy", "{'descr': '|i1', 'fortran_order': False, 'shape': (5,), }", labels,
      sizeof labels, 0);
  /* a unicode member that readers skip */
  uint32_t names[5 * 2] = {'a', 0, 'b', 0, 'c', 0, 'd', 0, 'e', 0};
  ADD("node_names.npy", "{'descr': '<U2', 'fortran_order': False, 'shape': (5,), }", names,
      sizeof names, 0);
  if (o.bomb) {
    /* labels claims 4 GB - 1 after the fact: central directory only */
    z.m[z.n - 2].usize = 0xFFFFFFF0u;
  }
#undef ADD
  zip_finish(&z, rel, o.zip64);
}

/* A 6-node dense graph (heterophilous layout), masks (2, 6). */
typedef struct dense_opts {
  int method;
  int overlap;       /* node 0 in train and test of split 1 */
  int mask_shape;    /* masks of shape (3,) */
  int drop_test;     /* no test_masks */
  int unlabelled;    /* node 5 label -1 but in split 0's train */
  int nan_feat;
  int one_d_masks;   /* masks of shape (6,) */
  int flip;          /* corrupt the deflate stream of edges */
  int edge_range;    /* edge id 6 */
  int sparse_label;  /* node 5 has label 99999: 100,000 class ids, 4 of them used */
} dense_opts;

static void dense_npz(const char *rel, dense_opts o) {
  zipw z = {0};
  float feat[6][2] = {{1, 0}, {0, 1}, {1, 1}, {2, 0}, {0, 2}, {0.25f, -1}};
  int64_t labels[6] = {0, 1, 1, 0, 2, 2};
  int64_t edges[7][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 0}, {0, 3}};
  /* split 0: train {0,1}, val {2,3}, test {4,5}; split 1: train {4,5}, val {0,1}, test {2,3} */
  unsigned char train[2][6] = {{1, 1, 0, 0, 0, 0}, {0, 0, 0, 0, 1, 1}};
  unsigned char val[2][6] = {{0, 0, 1, 1, 0, 0}, {1, 1, 0, 0, 0, 0}};
  unsigned char test[2][6] = {{0, 0, 0, 0, 1, 1}, {0, 0, 1, 1, 0, 0}};
  if (o.overlap) test[1][0] = 1;
  if (o.unlabelled) labels[0] = -1;
  if (o.nan_feat) feat[3][1] = 1.0f / 0.0f;
  if (o.edge_range) edges[6][1] = 6;
  if (o.sparse_label) labels[5] = 99999;
  bytes b;
#define ADD(name, dict, arr, sz, fl)           \
  do {                                         \
    b = npy(1, dict, arr, sz);                 \
    zip_add(&z, name, &b, o.method, fl);       \
    free(b.p);                                 \
  } while (0)
  ADD("node_features.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (6, 2), }", feat,
      sizeof feat, 0);
  ADD("node_labels.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (6,), }", labels,
      sizeof labels, 0);
  ADD("edges.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (7, 2), }", edges,
      sizeof edges, o.flip ? Z_FLIP : 0);
  const char *md = o.mask_shape ? "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }"
                   : o.one_d_masks ? "{'descr': '|b1', 'fortran_order': False, 'shape': (6,), }"
                                   : "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 6), }";
  size_t ms = o.mask_shape ? 3 : o.one_d_masks ? 6 : 12;
  ADD("train_masks.npy", md, train, ms, 0);
  ADD("val_masks.npy", md, val, ms, 0);
  if (!o.drop_test) ADD("test_masks.npy", md, test, ms, 0);
#undef ADD
  zip_finish(&z, rel, 0);
}

int main(int argc, char **argv) {
  outdir = argc > 1 ? argv[1] : ".";
  char sub[512];
  snprintf(sub, sizeof sub, "%s/npy", outdir);
  mkdir(sub, 0755);
  snprintf(sub, sizeof sub, "%s/npz", outdir);
  mkdir(sub, 0755);

  /* ---- .npy edge arrays ---- */
  int64_t e64[4][2] = {{0, 1}, {1, 2}, {2, 0}, {7, 3}};
  save_npy("npy/ok_i64.npy", 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (4, 2), }",
           e64, sizeof e64);
  /* Fortran order: column 0 (sources) then column 1 (targets), same edges as ok_i64 */
  int32_t f32[8] = {0, 1, 2, 7, 1, 2, 0, 3};
  save_npy("npy/ok_i4_fortran.npy", 1,
           "{'descr': '<i4', 'fortran_order': True, 'shape': (4, 2), }", f32, sizeof f32);
  uint8_t u8[6] = {0, 1, 1, 2, 2, 0};
  save_npy("npy/ok_u1_v2.npy", 2, "{\"descr\": \"|u1\", \"fortran_order\": False, \"shape\": (3, 2)}",
           u8, sizeof u8);
  save_npy("npy/ok_v3.npy", 3, "{'descr': '<i8', 'fortran_order': False, 'shape': (4, 2), }",
           e64, sizeof e64);
  {
    bytes b = npy(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (4, 2), }", e64,
                  sizeof e64);
    b.p[0] = 0x92;
    save("npy/bad_magic.npy", b.p, b.n);
    b.p[0] = 0x93;
    save("npy/trunc_header.npy", b.p, 40);
    save("npy/trunc_data.npy", b.p, b.n - 5);
    b.p[6] = 4;
    save("npy/version4.npy", b.p, b.n);
    b.p[6] = 1;
    put(&b, "\0\0\0", 3);
    save("npy/trailing.npy", b.p, b.n);
    free(b.p);
  }
  save_npy("npy/big_endian.npy", 1, "{'descr': '>i8', 'fortran_order': False, 'shape': (4, 2), }",
           e64, sizeof e64);
  save_npy("npy/float16.npy", 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 2), }",
           "\0\0\0\0\0\0\0\0", 8);
  save_npy("npy/object.npy", 1, "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }",
           "\0\0\0\0\0\0\0\0", 8);
  save_npy("npy/unicode.npy", 1, "{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }",
           "a\0\0\0b\0\0\0c\0\0\0", 12);
  save_npy("npy/structured.npy", 1,
           "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,), }", "\0\0\0\0", 4);
  save_npy("npy/float_edges.npy", 1,
           "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }", "\0\0\0\0\0\0\0\0", 8);
  save_npy("npy/shape3.npy", 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }",
           e64, 48);
  save_npy("npy/huge_shape.npy", 1,
           "{'descr': '<i8', 'fortran_order': False, 'shape': (1000000000000, 2), }", e64, 16);
  save_npy("npy/overflow_shape.npy", 1,
           "{'descr': '<i8', 'fortran_order': False, 'shape': (4611686018427387904, 4611686018427387904), }",
           e64, 16);
  save_npy("npy/unknown_key.npy", 1,
           "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2), 'extra': 1}", e64, 16);
  save_npy("npy/missing_shape.npy", 1, "{'descr': '<i8', 'fortran_order': False}", e64, 16);
  save_npy("npy/bad_bool.npy", 1, "{'descr': '<i8', 'fortran_order': maybe, 'shape': (1, 2)}",
           e64, 16);
  {
    int64_t neg[2][2] = {{0, 1}, {-3, 2}};
    save_npy("npy/negative_id.npy", 1,
             "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }", neg, sizeof neg);
    int64_t big[1][2] = {{0, 2147483647}};
    save_npy("npy/huge_id.npy", 1,
             "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2), }", big, sizeof big);
  }

  /* ---- .npz ---- */
  csr_npz("npz/ok_csr.npz", (csr_opts){0});
  csr_npz("npz/ok_csr_deflate.npz", (csr_opts){.method = 8});
  csr_npz("npz/ok_csr_zip64.npz", (csr_opts){.zip64 = 1});
  csr_npz("npz/ok_attr_matrix.npz", (csr_opts){.attr_matrix = 1});
  csr_npz("npz/bad_crc.npz", (csr_opts){.bad_crc = 1});
  csr_npz("npz/flipped_stored.npz", (csr_opts){.flip = 1});
  csr_npz("npz/corrupt_deflate.npz", (csr_opts){.method = 8, .flip = 1});
  csr_npz("npz/bad_deflate_block.npz", (csr_opts){.method = 8, .flip0 = 1});
  csr_npz("npz/method_bzip2.npz", (csr_opts){.method = 12});
  csr_npz("npz/missing_shape.npz", (csr_opts){.drop_shape = 1});
  csr_npz("npz/bad_indptr.npz", (csr_opts){.bad_indptr = 1});
  csr_npz("npz/adj_index_range.npz", (csr_opts){.bad_index = 1});
  csr_npz("npz/bad_label.npz", (csr_opts){.bad_label = 1});
  csr_npz("npz/nan_attr.npz", (csr_opts){.nan_attr = 1});
  csr_npz("npz/bomb.npz", (csr_opts){.method = 8, .bomb = 1});
  csr_npz("npz/huge_attr_shape.npz", (csr_opts){.huge_attr_shape = 1});
  dense_npz("npz/ok_dense.npz", (dense_opts){.method = 8});
  dense_npz("npz/ok_dense_1d.npz", (dense_opts){.method = 0, .one_d_masks = 1});
  dense_npz("npz/split_overlap.npz", (dense_opts){.method = 8, .overlap = 1});
  dense_npz("npz/mask_shape.npz", (dense_opts){.method = 8, .mask_shape = 1});
  dense_npz("npz/missing_test_mask.npz", (dense_opts){.method = 8, .drop_test = 1});
  dense_npz("npz/split_unlabelled.npz", (dense_opts){.method = 8, .unlabelled = 1});
  dense_npz("npz/inf_features.npz", (dense_opts){.method = 8, .nan_feat = 1});
  dense_npz("npz/dense_corrupt.npz", (dense_opts){.method = 8, .flip = 1});
  dense_npz("npz/edge_range.npz", (dense_opts){.method = 8, .edge_range = 1});
  dense_npz("npz/sparse_label.npz", (dense_opts){.method = 8, .sparse_label = 1});
  {
    zipw z = {0};
    bytes b = npy(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }", e64, 8);
    zip_add(&z, "foo.npy", &b, 0, 0);
    zip_add(&z, "bar.npy", &b, 8, 0);
    free(b.p);
    zip_finish(&z, "npz/unknown_layout.npz", 0);
  }
  {
    /* a truncated copy of ok_dense.npz and a file that is no zip at all */
    char path[512];
    snprintf(path, sizeof path, "%s/npz/ok_dense.npz", outdir);
    FILE *f = fopen(path, "rb");
    unsigned char buf[8192];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    save("npz/truncated.npz", buf, n / 2);
    save("npz/not_a_zip.npz", "hello, this is not a zip archive at all\n", 40);
  }
  return 0;
}
