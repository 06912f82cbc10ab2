/* order_hypergraph.c -- --order hypergraph: Zoltan's PHG on the column-net hypergraph of Â·H.
 *
 * Vertex i is row i of A (it holds row i of Â and of H); net j is { i : A(i, j) != 0 } ∪ { j }:
 * the rows that read row j of H, and j, which owns it. Under a 1D row partition a net of
 * connectivity λ_j is sent by j's part to the λ_j - 1 others, so the connectivity-1 cut is
 * exactly the rows 1d-sa sends per aggregation (the sum of |NnzCols(i, j)| over i != j). j is a
 * pin of its own net whether A has self loops or not (--no-self-loops): without it a net would
 * not count the row its owner sends.
 *
 * Zoltan gets the hypergraph vertex by vertex (ZOLTAN_COMPRESSED_VERTEX): the nets of vertex v
 * are row v's columns and v, which fg_order_hg_pins builds without a transpose.
 *
 * Balance: PHG balances one weight per vertex, and only one (given OBJ_WEIGHT_DIM=2 it uses
 * the first and ignores the second: R-MAT 16 at P=16 came out at rows 1.05, entries 9.9 x the
 * mean). It honours IMBALANCE_TOL on that weight; a combined weight (d̄ + nnz(row)) left every
 * part of R-MAT 18 within 5% on the sum but over on rows (parts of isolated rows and leaves)
 * or on entries (parts of hubs), up to 1.75 and 1.84 x the mean. So PHG balances entries,
 * w(v) = max(nnz(row v), 1) -- the constraint that is dear to restore, hubs being pins of many
 * nets -- and fg_order_compute then runs fg_order_rebalance (order_volume.c), which brings
 * rows (and any entries PHG left over) within 5% by moving light rows, cheapest in cut first.
 *
 * Determinism: PHG draws from Zoltan's process-wide generator, which carries over from one
 * call to the next; it is reset from the seed before every call (Zoltan_Srand: exported by
 * the library, declared in its uninstalled zz_rand.h), so the parts are a function of
 * (A, parts, seed). Zoltan runs on MPI_COMM_SELF: fg_order_compute is not collective. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "graph/fg_order.h"

#ifdef FG_HAVE_ZOLTAN
#include <zoltan.h>

/* zz_rand.h (not installed): the generator PHG draws from when given no state of its own */
extern void Zoltan_Srand(unsigned int seed, unsigned int *state);

typedef struct hg_query {
  int n;               /* the vertices PHG sees: the rows that are not isolated */
  const int64_t *vptr; /* their nets, renumbered into [0, n) */
  const int32_t *pins;
  const int32_t *orig; /* (n) the row of A each one is */
  const fg_csr *A;
} hg_query;

static int q_num_obj(void *data, int *ierr) {
  *ierr = ZOLTAN_OK;
  return ((const hg_query *)data)->n;
}

static void q_obj_list(void *data, int ngid, int nlid, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids,
                       int wdim, float *w, int *ierr) {
  const hg_query *q = data;
  (void)ngid, (void)nlid;
  for (int v = 0; v < q->n; v++) {
    gids[v] = (ZOLTAN_ID_TYPE)v;
    lids[v] = (ZOLTAN_ID_TYPE)v;
    if (wdim == 1) {
      const int64_t r = q->orig[v];
      w[v] = (float)FG_MAX(q->A->rowptr[r + 1] - q->A->rowptr[r], (int64_t)1);
    }
  }
  *ierr = ZOLTAN_OK;
}

static void q_hg_size(void *data, int *nlists, int *npins, int *format, int *ierr) {
  const hg_query *q = data;
  *nlists = q->n;
  *npins = (int)q->vptr[q->n];
  *format = ZOLTAN_COMPRESSED_VERTEX;
  *ierr = ZOLTAN_OK;
}

static void q_hg_cs(void *data, int ngid, int nlists, int npins, int format, ZOLTAN_ID_PTR vgid,
                    int *vptr, ZOLTAN_ID_PTR pin_gid, int *ierr) {
  const hg_query *q = data;
  (void)ngid;
  if (nlists != q->n || npins != (int)q->vptr[q->n] || format != ZOLTAN_COMPRESSED_VERTEX) {
    *ierr = ZOLTAN_FATAL;
    return;
  }
  for (int v = 0; v < q->n; v++) {
    vgid[v] = (ZOLTAN_ID_TYPE)v;
    vptr[v] = (int)q->vptr[v];
  }
  for (int k = 0; k < npins; k++) pin_gid[k] = (ZOLTAN_ID_TYPE)q->pins[k];
  *ierr = ZOLTAN_OK;
}

/* Zoltan_Set_Param for each (name, value); a refusal is an internal error (a typo here). */
static fg_status set_params(struct Zoltan_Struct *zz, const char *const (*kv)[2], int count) {
  fg_status st = FG_OK;
  for (int i = 0; i < count; i++)
    FG_REQUIRE(Zoltan_Set_Param(zz, kv[i][0], kv[i][1]) == ZOLTAN_OK, FG_ERR_INTERNAL,
               "--order hypergraph: Zoltan refused parameter %s=%s", kv[i][0], kv[i][1]);
cleanup:
  return st;
}

fg_status fg_order_hypergraph_parts(const fg_csr *A, int parts, uint64_t seed, int32_t *part) {
  fg_status st = FG_OK;
  struct Zoltan_Struct *zz = NULL;
  int64_t *vptr = NULL, *prows = NULL;
  int32_t *pins = NULL, *netsz = NULL, *orig = NULL, *newid = NULL;
  int64_t m = 0, e = 0;
  int mpi_up = 0, mpi_down = 0, changes = 0, ngid = 0, nlid = 0, nimp = 0, nexp = 0, rc;
  ZOLTAN_ID_PTR imp_gid = NULL, imp_lid = NULL, exp_gid = NULL, exp_lid = NULL;
  int *imp_proc = NULL, *imp_part = NULL, *exp_proc = NULL, *exp_part = NULL;
  float version = 0.0f;
  char nparts[32];
  hg_query q;
  const int64_t n = A->nrows;
  MPI_Initialized(&mpi_up);
  MPI_Finalized(&mpi_down);
  FG_REQUIRE(mpi_up && !mpi_down, FG_ERR_INVALID_ARG,
             "--order hypergraph: Zoltan needs MPI initialised by the caller");
  FG_REQUIRE(n <= INT_MAX && A->nnz + n <= INT_MAX, FG_ERR_UNSUPPORTED,
             "--order hypergraph: %lld nodes and %lld pins exceed Zoltan's 32-bit counts",
             (long long)n, (long long)(A->nnz + n));
  FG_CHECK(fg_order_hg_pins(A, &vptr, &pins));
  /* isolated rows (net {v}, nets {v}: nothing read, nothing sent) cost no cut in any part;
   * PHG does not see them (a third of R-MAT 18's rows), they fill the parts with the fewest
   * rows afterwards, and fg_order_rebalance evens what remains */
  FG_CALLOC(netsz, n > 0 ? n : 1);
  FG_ALLOC(orig, n > 0 ? n : 1);
  FG_ALLOC(newid, n > 0 ? n : 1);
  FG_CALLOC(prows, parts);
  for (int64_t k = 0; k < vptr[n]; k++) netsz[pins[k]]++;
  for (int64_t v = 0; v < n; v++) {
    newid[v] = vptr[v + 1] - vptr[v] == 1 && netsz[v] == 1 ? -1 : (int32_t)m;
    if (newid[v] >= 0) orig[m++] = (int32_t)v;
  }
  /* compact in place: vertex k = orig[k] keeps its nets, renamed (a net of a kept vertex is
   * never an isolated row's) */
  for (int64_t k = 0; k < m; k++) {
    const int64_t v = orig[k], b = vptr[v], c = vptr[v + 1];
    vptr[k] = e;
    for (int64_t t = b; t < c; t++) pins[e++] = newid[pins[t]];
  }
  vptr[m] = e;
  q.n = (int)m;
  q.vptr = vptr;
  q.pins = pins;
  q.orig = orig;
  q.A = A;
  for (int64_t v = 0; v < n; v++) part[v] = -1;
  if (m == 0) goto isolated;
  FG_REQUIRE(Zoltan_Initialize(0, NULL, &version) == ZOLTAN_OK, FG_ERR_INTERNAL,
             "--order hypergraph: Zoltan_Initialize failed");
  zz = Zoltan_Create(MPI_COMM_SELF);
  FG_REQUIRE(zz, FG_ERR_NOMEM, "--order hypergraph: Zoltan_Create failed");
  snprintf(nparts, sizeof nparts, "%d", parts);
  {
    /* IMBALANCE_TOL: the weight of a part at most 5% over the mean; PHG_EDGE_SIZE_THRESHOLD
     * 1: keep every net (the default drops nets over a quarter of the vertices, whose rows
     * would then be sent without the cut counting them); REMAP 0: part numbers as PHG found
     * them (fg_order_compute relabels anyway) */
    static const char *const fixed[][2] = {
        {"DEBUG_LEVEL", "0"},          {"LB_METHOD", "HYPERGRAPH"},
        {"HYPERGRAPH_PACKAGE", "PHG"}, {"LB_APPROACH", "PARTITION"},
        {"NUM_GID_ENTRIES", "1"},      {"NUM_LID_ENTRIES", "1"},
        {"OBJ_WEIGHT_DIM", "1"},       {"EDGE_WEIGHT_DIM", "0"},
        {"IMBALANCE_TOL", "1.05"},     {"PHG_CUT_OBJECTIVE", "CONNECTIVITY"},
        {"PHG_EDGE_SIZE_THRESHOLD", "1.0"}, {"REMAP", "0"},
        {"RETURN_LISTS", "PARTS"},     {"CHECK_HYPERGRAPH", "0"}};
    const char *const np[1][2] = {{"NUM_GLOBAL_PARTS", nparts}};
    FG_CHECK(set_params(zz, fixed, (int)(sizeof fixed / sizeof fixed[0])));
    FG_CHECK(set_params(zz, np, 1));
  }
  Zoltan_Set_Num_Obj_Fn(zz, q_num_obj, &q);
  Zoltan_Set_Obj_List_Fn(zz, q_obj_list, &q);
  Zoltan_Set_HG_Size_CS_Fn(zz, q_hg_size, &q);
  Zoltan_Set_HG_CS_Fn(zz, q_hg_cs, &q);
  /* a splitmix-style hash of the 64-bit seed into Zoltan's 32-bit state */
  {
    uint64_t z = seed + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    Zoltan_Srand((unsigned int)((z ^ (z >> 31)) & 0xffffffffu), NULL);
  }
  rc = Zoltan_LB_Partition(zz, &changes, &ngid, &nlid, &nimp, &imp_gid, &imp_lid, &imp_proc,
                           &imp_part, &nexp, &exp_gid, &exp_lid, &exp_proc, &exp_part);
  FG_REQUIRE(rc == ZOLTAN_OK || rc == ZOLTAN_WARN, rc == ZOLTAN_MEMERR ? FG_ERR_NOMEM : FG_ERR_INTERNAL,
             "--order hypergraph: Zoltan_LB_Partition failed (%d) for %lld nodes, %lld pins, "
             "%d parts", rc, (long long)m, (long long)vptr[m], parts);
  /* RETURN_LISTS=PARTS: the export lists hold every object with its part */
  FG_REQUIRE(nexp == (int)m, FG_ERR_INTERNAL,
             "--order hypergraph: Zoltan returned %d of %lld parts", nexp, (long long)m);
  for (int k = 0; k < nexp; k++) {
    const int64_t v = (int64_t)exp_gid[k];
    FG_REQUIRE(v >= 0 && v < m && exp_part[k] >= 0 && exp_part[k] < parts, FG_ERR_INTERNAL,
               "--order hypergraph: Zoltan put node %lld in part %d of %d", (long long)v,
               exp_part[k], parts);
    part[orig[v]] = exp_part[k];
    prows[exp_part[k]]++;
  }
isolated:
  for (int64_t v = 0; v < n; v++) {
    int lo = 0;
    if (newid[v] >= 0) continue;
    for (int p = 1; p < parts; p++)
      if (prows[p] < prows[lo]) lo = p;
    part[v] = lo;
    prows[lo]++;
  }
  for (int64_t v = 0; v < n; v++)
    FG_REQUIRE(part[v] >= 0, FG_ERR_INTERNAL, "--order hypergraph: Zoltan gave node %lld no part",
               (long long)v);
cleanup:
  if (imp_gid || imp_lid || imp_proc || imp_part)
    Zoltan_LB_Free_Part(&imp_gid, &imp_lid, &imp_proc, &imp_part);
  if (exp_gid || exp_lid || exp_proc || exp_part)
    Zoltan_LB_Free_Part(&exp_gid, &exp_lid, &exp_proc, &exp_part);
  if (zz) Zoltan_Destroy(&zz);
  free(vptr);
  free(pins);
  free(netsz);
  free(orig);
  free(newid);
  free(prows);
  return st;
}

#else

fg_status fg_order_hypergraph_parts(const fg_csr *A, int parts, uint64_t seed, int32_t *part) {
  (void)A, (void)parts, (void)seed, (void)part;
  return fg_error_set(FG_ERR_UNSUPPORTED, __FILE__, __LINE__,
                      "--order hypergraph: this build has no Zoltan (install "
                      "libtrilinos-zoltan-dev and rebuild)");
}

#endif
