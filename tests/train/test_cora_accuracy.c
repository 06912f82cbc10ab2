/* test_cora_accuracy.c -- Kipf & Welling's configuration on the bundled Cora reaches a mean
 * test accuracy (at the best-validation epoch) of at least 80.5 % over 5 seeds. */
#include "fullgraph.h"
#include "testutil.h"

int main(int argc, char **argv) {
  fg_dataset *ds = NULL;
  fg_load_config lc = fg_load_config_default();
  double sum = 0.0;
  const int seeds = 5;
  MPI_Init(&argc, &argv);
  EXPECT_OK(fg_dataset_load(FG_DEMO_DATA, &lc, &ds));
  for (int s = 0; ds && s < seeds; s++) {
    fg_train_config c = fg_train_config_default(); /* Kipf: 2 layers, 16, 0.5, 0.01, 5e-4 */
    fg_train_result r;
    c.normalize_features = 1;
    c.verbose = 0;
    c.seed = (uint64_t)s;
    EXPECT_OK(fg_train(MPI_COMM_SELF, ds, &c, &r));
    printf("seed %d: best epoch %d, valid %.4f, test %.4f\n", s, r.best_epoch, r.best_valid_acc,
           r.test_acc);
    sum += r.test_acc;
  }
  printf("mean test accuracy over %d seeds: %.4f (Kipf & Welling: 0.815)\n", seeds, sum / seeds);
  EXPECT(sum / seeds >= 0.805);
  fg_dataset_destroy(&ds);
  MPI_Finalize();
  return fg_test_finish("test_cora_accuracy");
}
