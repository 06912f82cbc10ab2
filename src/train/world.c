/* world.c -- MPI for callers that have none of their own (the Python binding, a program of one
 * process): fg_init / fg_finalize, and the one entry point of the library that uses
 * MPI_COMM_WORLD (fg_train_world; everything else takes the caller's communicator). */
#include "core/fg_core.h"
#include "dist/fg_dist.h"
#include "model/fg_model.h"

/* 1 while MPI runs because fg_init started it: fg_finalize ends only that. */
static int g_we_initialized = 0;

fg_status fg_init(void) {
  fg_status st = FG_OK;
  int up = 0, down = 0, provided = 0;
  FG_CHECK_MPI(MPI_Finalized(&down));
  FG_REQUIRE(!down, FG_ERR_MPI, "fg_init: MPI was already finalized in this process; it cannot "
             "be started again");
  FG_CHECK_MPI(MPI_Initialized(&up));
  if (up) return FG_OK; /* the caller's MPI, or ours from an earlier call */
  /* FUNNELED, as the CLI: only the main thread calls MPI, OpenMP threads never do */
  FG_CHECK_MPI(MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided));
  g_we_initialized = 1;
cleanup:
  return st;
}

fg_status fg_finalize(void) {
  fg_status st = FG_OK;
  int down = 0;
  if (!g_we_initialized) return FG_OK;
  FG_CHECK_MPI(MPI_Finalized(&down));
  g_we_initialized = 0;
  if (!down) FG_CHECK_MPI(MPI_Finalize());
cleanup:
  return st;
}

/* 1 while MPI can be called (initialized and not finalized). */
static int mpi_running(void) {
  int up = 0, down = 0;
  if (MPI_Initialized(&up) != MPI_SUCCESS || !up) return 0;
  if (MPI_Finalized(&down) != MPI_SUCCESS || down) return 0;
  return 1;
}

int fg_world_rank(void) {
  int rank = 0;
  if (mpi_running()) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int fg_world_size(void) {
  int size = 1;
  if (mpi_running()) MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

fg_status fg_agree_world(fg_status local) {
  return mpi_running() ? fg_agree(MPI_COMM_WORLD, local) : local;
}

fg_status fg_train_world(const fg_dataset *ds, const fg_train_config *cfg,
                         fg_train_result *result) {
  fg_status st = FG_OK;
  FG_REQUIRE(cfg != NULL && result != NULL, FG_ERR_INVALID_ARG,
             "fg_train_world: configuration or result is NULL");
  FG_REQUIRE(mpi_running(), FG_ERR_INVALID_ARG,
             "fg_train_world: MPI is not running; call fg_init first");
  st = fg_train(MPI_COMM_WORLD, ds, cfg, result);
cleanup:
  return st;
}

fg_status fg_train_output_widths(const fg_dataset *ds, const fg_train_config *cfg,
                                 int64_t *classes, int64_t *embedding) {
  fg_status st = FG_OK;
  fg_model_choice mdl;
  int64_t *w = NULL;
  FG_REQUIRE(ds != NULL && cfg != NULL && classes != NULL && embedding != NULL,
             FG_ERR_INVALID_ARG, "fg_train_output_widths: NULL argument");
  FG_REQUIRE(cfg->layers >= 1 && cfg->layers <= 64, FG_ERR_INVALID_ARG,
             "--layers must be in [1, 64], got %d", cfg->layers);
  FG_CHECK(fg_model_choose(cfg->model, cfg->norm, cfg->adj_norm, cfg->gin_eps, &mdl));
  /* the stack's widths as fg_train lays them out: the embedding is the input of the model's
   * last layer (its first stage), as save_output writes it */
  const int L = fg_model_stack_layers(mdl.kind, cfg->layers);
  FG_ALLOC(w, (size_t)L + 1);
  FG_CHECK(fg_model_widths(mdl.kind, cfg->layers, cfg->hidden, cfg->widths,
                           fg_dataset_num_features(ds), fg_dataset_num_classes(ds), w));
  *classes = w[L];
  *embedding = cfg->layers >= 2 ? w[L - mdl.kind->stages] : 0;
cleanup:
  free(w);
  return st;
}
