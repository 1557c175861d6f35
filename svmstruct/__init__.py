"""svmstruct: structural SVMs trained with the 1-slack cutting-plane algorithm."""
import os

# The dense algebra here is small (Gram matrices of a working set of a few hundred constraints): BLAS
# threads only add overhead, and two runs side by side (make -j2) then crawl, 4x slower on 2 cores.
# Single-threaded BLAS unless the user chose otherwise; must happen before numpy loads its BLAS.
for _variable in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

__version__ = "0.1.0"
