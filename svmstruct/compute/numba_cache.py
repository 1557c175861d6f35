"""Where numba keeps the compiled kernels (`cache=True`): next to the package's modules (`__pycache__`, where
`python -m svmstruct.worker.warmup` compiled them), else in the user's cache (~/.cache/numba); numba takes the
first it can write. Where it can write neither (another user's read-only installation and no writable home: a
container, `nobody`), numba refuses to load the package at all. Then the kernels go to a private directory of this
user in the temporary folder, said once, when it is created. Checked before numba is imported (svmstruct's
__init__), with the file system's permissions only: nothing is compiled or written here but that directory. Then
only, NUMBA_CACHE_DIR is set in the environment (numba reads it when it is imported): the one change `import
svmstruct` makes to the process, where numba would otherwise not load at all."""
from __future__ import annotations

import os
import stat
import sys
import tempfile

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ensure() -> str | None:
    """Point numba at a writable cache when it has none (NUMBA_CACHE_DIR); the notice to print once, or None."""
    if os.environ.get("NUMBA_CACHE_DIR") or _in_tree_writable() or _writable(_user_wide()):
        return None
    try:
        folder, created = _private_folder()
    except OSError:
        return None  # nowhere at all: numba's own error, which the command line reports in one line
    os.environ["NUMBA_CACHE_DIR"] = folder
    numba_config = sys.modules.get("numba.core.config")
    if numba_config is not None:  # numba imported before svmstruct (a Python user's session)
        numba_config.CACHE_DIR = folder  # type: ignore[attr-defined]
    if not created:
        return None
    return (f"svmstruct: warning: numba cannot write its cache beside svmstruct ({PACKAGE}) nor in "
            f"{_user_wide()}: the compiled kernels are kept in {folder} (each command compiles what it uses the "
            "first time; set NUMBA_CACHE_DIR to choose another place)")


def _in_tree_writable() -> bool:
    """Every `__pycache__` folder of the package is writable, or can be created (numba's in-tree locator)."""
    for folder, subfolders, names in os.walk(PACKAGE):
        subfolders[:] = [d for d in subfolders if d != "__pycache__"]
        if any(name.endswith(".py") for name in names) and not _writable(os.path.join(folder, "__pycache__")):
            return False
    return True


def _user_wide() -> str:
    """numba's user-wide cache folder (its appdirs' user_cache_dir on Linux)."""
    return os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "numba")


def _writable(folder: str) -> bool:
    """FOLDER is a writable folder, or the nearest existing folder above it is (numba creates the rest)."""
    while not os.path.isdir(folder):
        if os.path.lexists(folder):
            return False
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent
    return os.access(folder, os.W_OK | os.X_OK, effective_ids=os.access in os.supports_effective_ids)


def _private_folder() -> tuple:
    """(this user's kernel folder in the temporary folder, whether it was created now): a folder of this user that
    nobody else may enter (OSError when there is none to be had). When another user holds its name (made first in a
    shared /tmp), a folder of an unpredictable name for this process alone, removed at its end."""
    folder = os.path.join(tempfile.gettempdir(), f"svmstruct-numba-{os.geteuid()}")
    try:
        os.mkdir(folder, 0o700)
        created = True
    except FileExistsError:
        created = False
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        import atexit
        import shutil

        folder = tempfile.mkdtemp(prefix=f"svmstruct-numba-{os.geteuid()}-")  # 0700, a name nobody can take first
        atexit.register(shutil.rmtree, folder, True)
        return folder, True
    if not _writable(folder):
        raise OSError(f"{folder} is not writable")
    return folder, created

