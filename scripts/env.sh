# Sourced by the scripts: lets Open MPI run as root in containers and with more ranks than cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# quiet the shared-memory and network probes Open MPI does in containers
export OMPI_MCA_btl_vader_single_copy_mechanism=none
