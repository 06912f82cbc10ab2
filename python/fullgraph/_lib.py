"""Finding and loading libfullgraph.so with ctypes, and the prototypes of the calls used.

Nothing here is compiled: the binding is the shared library's public C API (include/fullgraph.h)
called through ctypes. Only two small structs are mirrored (fg_load_config and fg_train_result,
plain fields); the training configuration is set by option name through the library's own
fg_train_config_set, so fields added to fg_train_config never need a change here.
"""

import atexit
import ctypes
import ctypes.util
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
# the build trees of a source checkout, in the order they are tried (not asan: an
# AddressSanitizer library cannot be loaded into an interpreter that was not built with it)
_PRESETS = ("release", "ci", "debug", "noomp")


class Error(Exception):
    """A failure reported by libfullgraph; str(e) is the library's message (fg_last_error)."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


def _candidates():
    env = os.environ.get("FULLGRAPH_LIB")
    if env:
        return [env], True
    root = os.path.dirname(os.path.dirname(_HERE))  # python/fullgraph -> the checkout
    paths = []
    for preset in _PRESETS:
        for name in ("libfullgraph.so.0", "libfullgraph.so"):
            p = os.path.join(root, "build", preset, name)
            if os.path.exists(p):
                paths.append(p)
                break
    installed = ctypes.util.find_library("fullgraph")
    if installed:
        paths.append(installed)
    return paths, False


def _load_mpi():
    """libmpi with RTLD_GLOBAL before the library: Open MPI's plugins (mca_*.so), which it
    dlopens at MPI_Init, resolve their symbols against libmpi in the global scope, which a
    library loaded by ctypes (RTLD_LOCAL) does not put there."""
    names = []
    found = ctypes.util.find_library("mpi")
    if found:
        names.append(found)
    names += ["libmpi.so.40", "libmpi.so"]
    for name in names:
        try:
            return ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL)
        except OSError:
            continue
    return None  # an MPI that needs no such care, or libfullgraph's own dependency will do


def _load():
    paths, from_env = _candidates()
    if not paths:
        raise ImportError(
            "fullgraph: libfullgraph.so not found: build it (cmake --preset release && cmake "
            "--build build/release), install it, or set FULLGRAPH_LIB to its path")
    _load_mpi()
    errors = []
    for p in paths:
        try:
            return ctypes.CDLL(p, mode=ctypes.RTLD_GLOBAL), p
        except OSError as e:
            errors.append("%s: %s" % (p, e))
            if from_env:
                break
    raise ImportError("fullgraph: cannot load libfullgraph.so (%s)" % "; ".join(errors))


lib, path = _load()


class LoadConfig(ctypes.Structure):
    """fg_load_config, field for field (include/fullgraph.h)."""
    _fields_ = [
        ("undirected", ctypes.c_int),
        ("dedup", ctypes.c_int),
        ("self_loops", ctypes.c_int),
        ("split_index", ctypes.c_int),
        ("gen_features", ctypes.c_int),
        ("gen_classes", ctypes.c_int),
        ("train_frac", ctypes.c_double),
        ("valid_frac", ctypes.c_double),
        ("seed", ctypes.c_uint64),
        ("split_name", ctypes.c_char_p),
        ("keep_ids", ctypes.c_int),
        ("mem_limit", ctypes.c_double),
        ("prepared_per_rank", ctypes.c_int),
    ]


class TrainResult(ctypes.Structure):
    """fg_train_result."""
    _fields_ = [
        ("epochs_run", ctypes.c_int),
        ("best_epoch", ctypes.c_int),
        ("best_valid_acc", ctypes.c_double),
        ("test_acc", ctypes.c_double),
        ("final_loss", ctypes.c_double),
        ("final_train_acc", ctypes.c_double),
        ("final_valid_acc", ctypes.c_double),
        ("final_test_acc", ctypes.c_double),
        ("mean_epoch_seconds", ctypes.c_double),
    ]


class Arrays(ctypes.Structure):
    """fg_arrays."""
    _fields_ = [
        ("num_nodes", ctypes.c_int64),
        ("num_edges", ctypes.c_int64),
        ("src", ctypes.c_void_p),
        ("dst", ctypes.c_void_p),
        ("num_features", ctypes.c_int64),
        ("features", ctypes.c_void_p),
        ("labels", ctypes.c_void_p),
        ("num_classes", ctypes.c_int64),
        ("split", ctypes.c_void_p),
        ("targets", ctypes.c_void_p),
        ("num_tasks", ctypes.c_int64),
    ]


class DatasetBuffers(ctypes.Structure):
    """fg_dataset_buffers."""
    _fields_ = [
        ("indptr", ctypes.c_void_p),
        ("indices", ctypes.c_void_p),
        ("features", ctypes.c_void_p),
        ("labels", ctypes.c_void_p),
        ("split", ctypes.c_void_p),
        ("node_ids", ctypes.c_void_p),
        ("targets", ctypes.c_void_p),
    ]


def _proto(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


_c = ctypes
_P = _c.c_void_p
_status = _c.c_int
fg_init = _proto("fg_init", _status)
fg_finalize = _proto("fg_finalize", _status)
fg_world_rank = _proto("fg_world_rank", _c.c_int)
fg_world_size = _proto("fg_world_size", _c.c_int)
fg_agree_world = _proto("fg_agree_world", _status, _status)
fg_last_error = _proto("fg_last_error", _c.c_char_p)
fg_status_string = _proto("fg_status_string", _c.c_char_p, _status)
fg_version_string = _proto("fg_version_string", _c.c_char_p)
fg_set_threads = _proto("fg_set_threads", None, _c.c_int)
fg_max_threads_allowed = _proto("fg_max_threads_allowed", _c.c_int)
fg_load_config_default = _proto("fg_load_config_default", LoadConfig)
fg_dataset_load = _proto("fg_dataset_load", _status, _c.c_char_p, _c.POINTER(LoadConfig),
                         _c.POINTER(_P))
fg_dataset_from_arrays = _proto("fg_dataset_from_arrays", _status, _c.POINTER(Arrays),
                                _c.POINTER(LoadConfig), _c.POINTER(_P))
fg_dataset_destroy = _proto("fg_dataset_destroy", None, _c.POINTER(_P))
fg_dataset_copy_arrays = _proto("fg_dataset_copy_arrays", _status, _P,
                                _c.POINTER(DatasetBuffers))
fg_dataset_num_nodes = _proto("fg_dataset_num_nodes", _c.c_int64, _P)
fg_dataset_num_edges = _proto("fg_dataset_num_edges", _c.c_int64, _P)
fg_dataset_num_features = _proto("fg_dataset_num_features", _c.c_int64, _P)
fg_dataset_num_classes = _proto("fg_dataset_num_classes", _c.c_int64, _P)
fg_dataset_num_tasks = _proto("fg_dataset_num_tasks", _c.c_int64, _P)
fg_train_config_create = _proto("fg_train_config_create", _P)
fg_train_config_destroy = _proto("fg_train_config_destroy", None, _c.POINTER(_P))
fg_train_config_set = _proto("fg_train_config_set", _status, _P, _c.c_char_p, _c.c_char_p)
fg_train_config_set_buffer = _proto("fg_train_config_set_buffer", _status, _P, _c.c_char_p, _P)
fg_train_config_set_command = _proto("fg_train_config_set_command", _status, _P, _c.c_int,
                                     _c.POINTER(_c.c_char_p))
fg_last_run_record = _proto("fg_last_run_record", _c.c_char_p)
fg_train_output_widths = _proto("fg_train_output_widths", _status, _P, _P,
                                _c.POINTER(_c.c_int64), _c.POINTER(_c.c_int64))
fg_train_world = _proto("fg_train_world", _status, _P, _P, _c.POINTER(TrainResult))

FG_STOPPED = -11


def check(status):
    """Raise Error with the library's message for a failed call."""
    if status != 0:
        msg = fg_last_error().decode("utf-8", "replace")
        if not msg:
            msg = fg_status_string(status).decode("utf-8", "replace")
        raise Error(msg, status)


# MPI once per process: a process started by mpirun joins its job, one started alone is a job
# of one. fg_finalize only ends MPI that fg_init started (never an mpi4py caller's).
check(fg_init())
atexit.register(fg_finalize)
