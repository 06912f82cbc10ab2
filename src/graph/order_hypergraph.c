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
 * Balance: PHG balances one weight per vertex. w(v) = d + nnz(row v), d = nnz / n the mean
 * row length, gives rows and entries the same total weight, so a part within IMBALANCE_TOL
 * (1.05) of the mean weight is within 5% on the sum of its rows (GEMMs, features, memory) and
 * its entries (SpMM), each scaled to the same total; either alone may drift further, which
 * `fullgraph info --order all` reports (row and nnz balance).
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
  int n;
  const int64_t *vptr;
  const int32_t *pins;
  const fg_csr *A;
  float mean_len; /* nnz / n: a row's weight beside its entries */
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
    if (wdim == 1) w[v] = q->mean_len + (float)(q->A->rowptr[v + 1] - q->A->rowptr[v]);
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
  int64_t *vptr = NULL;
  int32_t *pins = NULL;
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
  q.n = (int)n;
  q.vptr = vptr;
  q.pins = pins;
  q.A = A;
  q.mean_len = n > 0 ? (float)((double)A->nnz / (double)n) : 0.0f;
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
             "%d parts", rc, (long long)n, (long long)vptr[n], parts);
  /* RETURN_LISTS=PARTS: the export lists hold every object with its part */
  FG_REQUIRE(nexp == (int)n, FG_ERR_INTERNAL,
             "--order hypergraph: Zoltan returned %d of %lld parts", nexp, (long long)n);
  for (int64_t v = 0; v < n; v++) part[v] = -1;
  for (int k = 0; k < nexp; k++) {
    const int64_t v = (int64_t)exp_gid[k];
    FG_REQUIRE(v >= 0 && v < n && exp_part[k] >= 0 && exp_part[k] < parts, FG_ERR_INTERNAL,
               "--order hypergraph: Zoltan put node %lld in part %d of %d", (long long)v,
               exp_part[k], parts);
    part[v] = exp_part[k];
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
