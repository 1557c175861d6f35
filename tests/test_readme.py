"""Every shell and Python example of the README runs, as written, on the shipped data (the blocks are read from
README.md, not copied here), so the README cannot drift from what the commands do; its links lead somewhere."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

README = ROOT / "README.md"


def blocks(language: str) -> list:
    return re.findall(rf"^```{language}\n(.*?)^```", README.read_text(), re.S | re.M)


@pytest.mark.slow
def test_the_readmes_shell_and_python_examples_run_on_the_shipped_data(tmp_path):
    (tmp_path / "data").symlink_to(ROOT / "data")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    shell, python = blocks("sh"), blocks("python")
    assert len(shell) >= 6 and len(python) >= 1
    for number, block in enumerate(shell, 1):
        run = subprocess.run(["bash", "-e", "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=600)
        assert run.returncode == 0, f"README's shell block {number} failed:\n{block}\n{run.stderr}"
        assert "Traceback" not in run.stderr, run.stderr
    for number, block in enumerate(python, 1):
        run = subprocess.run([sys.executable, "-"], input=block, cwd=tmp_path, env=env, capture_output=True,
                             text=True, timeout=600)
        assert run.returncode == 0, f"README's Python block {number} failed:\n{run.stderr}"
    for written in ("map.model", "rank.model", "ndcg.model", "test.pred", "test.run", "test.qrels", "div.model",
                    "api.model", "digits.pred", "letters.tags"):
        assert (tmp_path / written).stat().st_size > 0, written


def test_the_readme_and_the_docs_link_to_files_that_exist():
    for page in [README, *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text()):
            assert (page.parent / target).exists(), f"{page.name} links to {target}, which does not exist"


@pytest.mark.slow
def test_the_checkpoint_example_of_docs_learn_runs_as_written(tmp_path):
    """docs/learn.md's stopped-then-resumed run, on the shipped data: the first stops at its -# limit (a warning,
    the checkpoint kept), the second resumes to a converged model and removes the checkpoint."""
    (tmp_path / "data").symlink_to(ROOT / "data")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    text = (ROOT / "docs" / "learn.md").read_text()
    (block,) = [b for b in re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M) if "--resume" in b]
    first, second = [re.split(r"\s#\s", line)[0] for line in block.strip().splitlines()]
    stopped = subprocess.run(["bash", "-c", first], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert stopped.returncode == 0 and "before convergence" in stopped.stderr and (tmp_path / "map.ckpt").exists()
    resumed = subprocess.run(["bash", "-c", second], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert "converged 1" in (tmp_path / "map.model").read_text() and not (tmp_path / "map.ckpt").exists()
