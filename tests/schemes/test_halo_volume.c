/* test_halo_volume.c -- the halo exchange's volumes (fg_halo.h) on every test graph, 2 to 8
 * blocks, natural, random and (with METIS) metis orders: post-aggregation sends exactly
 * 1d-sa's rows (|NnzCols|, fg_layout_halo_counts); pre-aggregation one row per destination with
 * a neighbour in the sender's block (counted here by brute force); the hybrid's minimum vertex
 * cover never more than either, and its total below the smaller total on the graphs with a
 * real choice (SuperGCN Table 4: hybrid under pre). */
#include <stdlib.h>
#include <string.h>

#include "schemes/fg_halo.h"
#include "schemes/fg_layouts.h"
#include "test_data.h"
#include "testutil.h"

/* Distinct destinations of block r with a neighbour in block s, by a marker array. */
static int64_t pre_rows(const fg_csr *B, const int64_t *offs, int s, int r) {
  int64_t k = 0;
  for (int64_t u = offs[r]; u < offs[r + 1]; u++)
    for (int64_t e = B->rowptr[u]; e < B->rowptr[u + 1]; e++)
      if (B->col[e] >= offs[s] && B->col[e] < offs[s + 1]) {
        k++;
        break;
      }
  return k;
}

int main(void) {
  static const fg_order_kind orders[] = {FG_ORDER_NATURAL, FG_ORDER_RANDOM, FG_ORDER_METIS};
  int cases = 0;
  for (int data = 0; data < TEST_DATA_COUNT; data++) {
    fg_dataset *ds = NULL;
    EXPECT_OK(test_data_make(data, &ds));
    if (!ds) continue;
    for (int oi = 0; oi < 3; oi++) {
      if (orders[oi] == FG_ORDER_METIS && !test_have_metis()) continue;
      for (int P = 2; P <= 8; P++) {
        fg_layouts lay;
        const fg_layout *gl = NULL;
        fg_halo_volume *vol = malloc(sizeof *vol * (size_t)(P * P));
        int64_t *cnt = malloc(sizeof *cnt * (size_t)(P * P));
        int64_t tot_pre = 0, tot_post = 0, tot_hyb = 0;
        int ok = 1;
        memset(&lay, 0, sizeof lay);
        if (!vol || !cnt) exit(2);
        EXPECT_OK(fg_layouts_1d(&lay, ds, P, orders[oi], 5, (fg_adj_spec){FG_ADJ_SYM, 0}, &gl));
        if (!gl) continue;
        EXPECT_OK(fg_halo_volumes(&gl->B, gl->offs, P, vol));
        EXPECT_OK(fg_layout_halo_counts(&gl->B, gl->offs, P, cnt));
        for (int s = 0; s < P; s++)
          for (int r = 0; r < P; r++) {
            const fg_halo_volume *v = &vol[s * P + r];
            if (s == r) {
              ok &= v->pre == 0 && v->post == 0 && v->hybrid == 0;
              continue;
            }
            ok &= v->post == cnt[(int64_t)r * P + s];
            ok &= v->pre == pre_rows(&gl->B, gl->offs, s, r);
            ok &= v->hybrid <= v->pre && v->hybrid <= v->post;
            ok &= (v->pre > 0) == (v->hybrid > 0);
            tot_pre += v->pre;
            tot_post += v->post;
            tot_hyb += v->hybrid;
          }
        EXPECT_MSG(ok, "%s P=%d order %d: a pair's volumes are not 1d-sa's, the destinations', "
                   "or a cover within both", test_data_name(data), P, oi);
        /* on the graphs with many cut edges (not the 4-node and path graphs) the cover saves */
        if (tot_pre > 100)
          EXPECT_MSG(tot_hyb < FG_MIN(tot_pre, tot_post), "%s P=%d order %d: hybrid %lld rows, "
                     "pre %lld, post %lld", test_data_name(data), P, oi, (long long)tot_hyb,
                     (long long)tot_pre, (long long)tot_post);
        if (P == 8)
          printf("%-16s order %d P=8: rows sent per aggregation pre %lld, post %lld, hybrid "
                 "%lld\n", test_data_name(data), oi, (long long)tot_pre, (long long)tot_post,
                 (long long)tot_hyb);
        cases++;
        fg_layouts_free(&lay);
        free(vol);
        free(cnt);
      }
    }
    fg_dataset_destroy(&ds);
  }
  printf("halo volumes: %d layouts checked\n", cases);
  return fg_test_finish("test_halo_volume");
}
