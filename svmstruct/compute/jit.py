"""numba's njit and prange, as every kernel module of svmstruct imports them: importing them from here also has this
process say once, on stderr, when it compiles a kernel rather than loading it from the cache (compute.numba_cache:
where the compiled kernels are kept). A kernel compiles the first time any command runs it, once per installation;
`python -m svmstruct.worker.warmup` compiles them all at once."""
from numba import njit, prange  # noqa: F401 - the kernel modules' decorators
from numba.core import event

from svmstruct.compute import numba_cache


class _SayCompiling(event.Listener):
    """numba's compile events (a cache miss: loading from the cache is not one): the first one is said."""

    def on_start(self, ev) -> None:
        numba_cache.say_compiling()

    def on_end(self, ev) -> None:
        pass


event.register("numba:compile", _SayCompiling())
