"""The benchmarks' resident worker: commands served as inside make. A module of its own, light: a benchmark that
measures its children's peak memory (os.wait4) must not import numpy or svmstruct's training first, since a
forked child's peak counts the parent's pages until it execs."""
import subprocess
import sys
import time
from pathlib import Path


def resident_worker(svmstruct: str, folder: str, env: dict) -> dict:
    """ENV with a resident worker of its own in FOLDER serving its commands (as inside make, or SVMSTRUCT_RESIDENT=1
    from a shell), its server started and listening; control.stop_servers(FOLDER, every=True) stops it."""
    env = {**env, "SVMSTRUCT_RESIDENT_DIR": folder}
    subprocess.run([svmstruct, "--version"], env=env, capture_output=True, check=True)
    deadline = time.monotonic() + 60
    while not list(Path(folder).glob("*.sock")):
        if time.monotonic() > deadline:
            sys.exit("the resident worker did not start")
        time.sleep(0.05)
    return env
