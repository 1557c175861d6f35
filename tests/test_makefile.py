"""The Makefile workflows: the copyable recipe in docs/performance.md (run as written, on the shipped data) keeps its
models, and every target that needs ../shared says so in one line when it is absent."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

VENV_BIN = Path(sys.executable).parent


def batch_recipe() -> str:
    text = (ROOT / "docs" / "performance.md").read_text()
    block = re.search(r"From the shell the same loop is:\n\n(?:<!--.*?-->\n)?```make\n(.*?)```", text, re.S)
    assert block, "docs/performance.md's Makefile recipe is missing"
    return block.group(1)


def test_the_batch_recipe_keeps_its_models(tmp_path):
    (tmp_path / "Makefile").write_text(batch_recipe())
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "small").symlink_to(ROOT / "data" / "mq2008-small")
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}"}
    run = subprocess.run(["make", "-j2", "tables", "FOLDS=small", "LOSSES=map pairs"], cwd=tmp_path, env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    for loss in ("map", "pairs"):
        assert (tmp_path / "exp" / "small" / f"{loss}.model").is_file(), "make deleted the model"
        assert (tmp_path / "exp" / "small" / f"{loss}.pred").is_file()
    assert re.search(r"^map\s+0\.\d{4}\s+0\.\d{4} \d+/\d+", run.stdout, re.M), run.stdout
    again = subprocess.run(["make", "-q", "exp/small/map.pred", "exp/small/pairs.pred", "FOLDS=small"], cwd=tmp_path,
                           env=env)
    assert again.returncode == 0  # up to date: nothing deleted, nothing to redo


@pytest.mark.parametrize("target", ["exp-mq2008", "exp-dorm", "bench-synth", "bench-perf", "bench-engine",
                                    "parity-report"])
@pytest.mark.slow
def test_targets_that_need_the_shared_data_fail_in_one_line_without_it(target, tmp_path):
    run = subprocess.run(["make", "-s", target, f"SHARED={tmp_path / 'absent'}", f"OUT={tmp_path}"], cwd=ROOT,
                         capture_output=True, text=True)
    assert run.returncode != 0
    ours = [line for line in (run.stdout + run.stderr).splitlines() if line.startswith("error: ")]
    assert len(ours) == 1 and "shared" in ours[0], run.stdout + run.stderr
    assert "Traceback" not in run.stderr
