"""What the worker's server loads before its first command: every module the commands use, then the numba kernels
that `python -m svmstruct.worker.warmup` compiled into the cache, from the one declared list of modules that hold
kernels (KERNEL_MODULES: the warm-up checks that it compiled each of them; a test checks the list is complete)."""
from __future__ import annotations

import sys

NOT_PRELOADED = ("__main__", "warmup", "distributed", "resident", "server")
# every module that defines numba kernels, those that every command or the common losses use first
KERNEL_MODULES = ("svmstruct.io.svmlight_parser", "svmstruct.compute.matvec", "svmstruct.dataset.order_kernels",
                  "svmstruct.losses.rank_oracles", "svmstruct.losses.map_oracles", "svmstruct.losses.dorm_oracles",
                  "svmstruct.losses.assignment", "svmstruct.losses.perf_oracles",
                  "svmstruct.compute.sums", "svmstruct.kernels.kernel_functions", "svmstruct.diversity.greedy",
                  "svmstruct.problems.viterbi", "svmstruct.losses.mrr_oracles",
                  "svmstruct.io.svmlight_numbers", "svmstruct.problems.class_kernels", "svmstruct.io.float_text",
                  "svmstruct.train.row_kernels", "svmstruct.evaluation.pair_counts")


def kernels() -> list:
    """Import what the commands use; the cached kernel signatures to load, as (kernel, signature) in
    KERNEL_MODULES' order: the one-thread kernels only (a parallel one would launch the threading layer)."""
    import importlib
    import pkgutil

    import svmstruct

    def skip(name: str) -> None:
        sys.stderr.write(f"not preloaded: {name}: {sys.exc_info()[1]!r}\n")

    for found in pkgutil.walk_packages(svmstruct.__path__, "svmstruct.", onerror=skip):
        if found.name.rsplit(".", 1)[1] not in NOT_PRELOADED:
            try:  # a module that cannot be imported (a stale file of an older install) is left to the command
                importlib.import_module(found.name)
            except Exception:  # noqa: BLE001 - logged; a command that needs it reports the error itself
                skip(found.name)
    from numba.core.registry import CPUDispatcher

    from svmstruct.compute.threads import ParallelKernel

    dispatchers: list = []
    for module_name in KERNEL_MODULES:
        module = sys.modules.get(module_name)
        for kernel in list(vars(module).values()) if module is not None else ():
            if isinstance(kernel, ParallelKernel) and kernel.__module__ == module_name:
                dispatchers.append(kernel.one_thread)
            elif isinstance(kernel, CPUDispatcher) and kernel.__module__ == module_name \
                    and not kernel.targetoptions.get("parallel"):
                dispatchers.append(kernel)
    return [(kernel, signature) for kernel in dispatchers for signature in cached_signatures(kernel)]


def cached_signatures(kernel) -> list:
    """The signatures of KERNEL that numba's cache holds for this machine (read from its index; a kernel whose
    index cannot be read is not preloaded: a child loads it when it runs it)."""
    try:
        magic = kernel.targetctx.codegen().magic_tuple()
        return [entry[0] for entry in kernel._cache._cache_file._load_index() if entry[1] == magic]
    except Exception as e:
        sys.stderr.write(f"not preloaded: {kernel.__name__}: {e!r}\n")
        return []


def load(kernel, signature) -> None:
    """Load a cached signature of KERNEL through numba's own dispatcher (Dispatcher.compile: a cache hit is
    loaded, registered for the functions compiled later that call it, and added to the kernel's overloads)."""
    try:
        kernel.compile(signature)
    except Exception as e:
        sys.stderr.write(f"not preloaded: {kernel.__name__}{signature}: {e!r}\n")
