/* test_io_cora.c -- the bundled demo dataset (data/cora, Planetoid Cora in the OGB raw layout)
 * read with fg_read_ogb: sizes, features, labels and the Planetoid split, checked against
 * facts about the published data (class sizes, split ids). Always runs. */
#include <stdio.h>
#include <string.h>

#include "io/fg_io.h"
#include "testutil.h"

static void check_cora(const char *dir) {
  fg_raw r;
  fg_status st = fg_read_ogb(dir, NULL, &r);
  EXPECT_OK(st);
  if (st != FG_OK) return;
  EXPECT(r.num_nodes == 2708);
  EXPECT(r.num_edges == 5278);
  EXPECT(r.num_features == 1433);
  EXPECT(r.num_classes == 7);
  EXPECT(r.directed == 0);
  EXPECT(r.features && r.labels && r.split);
  if (!r.features || !r.labels || !r.split) goto done;

  /* each undirected edge once, u < v */
  int64_t bad = 0;
  for (int64_t e = 0; e < r.num_edges; e++) bad += !(r.src[e] < r.dst[e] && r.dst[e] < 2708);
  EXPECT_MSG(bad == 0, "%lld edges with u >= v or out of range", (long long)bad);
  /* binary bag of words with 49216 ones */
  int64_t ones = 0, other = 0;
  for (int64_t i = 0; i < r.num_nodes * r.num_features; i++) {
    if (r.features[i] == 1.0f) ones++;
    else if (r.features[i] != 0.0f) other++;
  }
  EXPECT_MSG(ones == 49216 && other == 0, "ones %lld other %lld", (long long)ones,
             (long long)other);
  /* Planetoid class sizes */
  static const int64_t class_size[7] = {351, 217, 418, 818, 426, 298, 180};
  int64_t cnt[7] = {0};
  for (int64_t i = 0; i < r.num_nodes; i++)
    if (r.labels[i] >= 0 && r.labels[i] < 7) cnt[r.labels[i]]++;
  for (int c = 0; c < 7; c++) EXPECT_MSG(cnt[c] == class_size[c], "class %d: %lld", c,
                                         (long long)cnt[c]);
  /* Planetoid split: train 0..139, valid 140..639, test 1708..2707 */
  int64_t wrong = 0, sizes[3] = {0, 0, 0};
  for (int64_t i = 0; i < r.num_nodes; i++) {
    int want = i < 140 ? FG_SPLIT_TRAIN : i < 640 ? FG_SPLIT_VALID
               : i >= 1708 ? FG_SPLIT_TEST : FG_SPLIT_NONE;
    wrong += r.split[i] != want;
    if (r.split[i] >= 0) sizes[r.split[i]]++;
  }
  EXPECT_MSG(wrong == 0, "%lld nodes in the wrong split", (long long)wrong);
  EXPECT(sizes[0] == 140 && sizes[1] == 500 && sizes[2] == 1000);
  /* the split folder by name gives the same */
  fg_raw r2;
  EXPECT_OK(fg_read_ogb(dir, "planetoid", &r2));
  EXPECT(r2.split && memcmp(r2.split, r.split, 2708) == 0);
  fg_raw_free(&r2);
done:
  fg_raw_free(&r);
}

int main(void) {
  check_cora(FG_DEMO_DATA);
  return fg_test_finish("test_io_cora");
}
