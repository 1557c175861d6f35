"""Every shell and Python block of docs/ runs as printed on the shipped data, or says it is a template and what it
needs: a line `<!-- template: needs ... -->` right before its fence (README.md's blocks all run:
tests/test_readme.py). A page's Python blocks run as one program, in order (a later block uses an earlier one's
names); its shell blocks one at a time, with `bash -e`, in a folder where `data/` is the shipped data."""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

PAGES = sorted((ROOT / "docs").glob("*.md"))
CODE = ("sh", "bash", "python", "make")  # the languages of blocks a reader runs
FENCE = re.compile(r"^(?:<!-- template: (?P<needs>[^\n]*?) -->\n)?```(?P<language>[a-z]*)\n(?P<body>.*?)^```",
                   re.S | re.M)


def code_blocks(page: Path) -> list:
    """(language, what a template needs or None, body, line) of every block of code on the page."""
    text = page.read_text()
    return [(m["language"], m["needs"], m["body"], text[:m.start("language")].count("\n") + 1)
            for m in FENCE.finditer(text) if m["language"] in CODE]


def test_every_block_of_code_runs_or_says_what_it_needs():
    for page in PAGES:
        for language, needs, _body, line in code_blocks(page):
            if needs is not None:
                assert needs.startswith("needs ") and len(needs) > len("needs "), \
                    f"{page.name}:{line}: a template names what it needs (<!-- template: needs FILES -->)"
            else:
                assert language in ("sh", "bash", "python"), \
                    f"{page.name}:{line}: a {language} block runs in the suite only as sh or python; mark it a template"


def runnable(page: Path) -> list:
    return [(language, body, line) for language, needs, body, line in code_blocks(page) if needs is None]


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if runnable(p)], ids=lambda p: p.name)
def test_the_runnable_blocks_run_as_printed(page, tmp_path):
    (tmp_path / "data").symlink_to(ROOT / "data")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(ROOT / "tests")}
    blocks = runnable(page)
    for language, body, line in blocks:
        if language in ("sh", "bash"):
            run = subprocess.run(["bash", "-e", "-c", body], cwd=tmp_path, env=env, capture_output=True, text=True,
                                 timeout=600)
            assert run.returncode == 0, f"{page.name}:{line}: the shell block failed:\n{body}\n{run.stderr}"
            assert "Traceback" not in run.stderr, run.stderr
    program = "\n".join(body for language, body, _ in blocks if language == "python")
    if program:
        run = subprocess.run([sys.executable, "-"], input=program, cwd=tmp_path, env=env, capture_output=True,
                             text=True, timeout=600)
        assert run.returncode == 0, f"{page.name}'s Python blocks failed:\n{run.stderr}"


def test_distributed_md_starts_dask_with_commands_that_exist():
    """The scheduler and worker commands docs/distributed.md prints are the ones `pip install
    'svmstruct[distributed]'` installs (`dask scheduler`, `dask worker`; `dask-scheduler` is gone)."""
    pytest.importorskip("distributed")
    text = (ROOT / "docs" / "distributed.md").read_text()
    commands = {tuple(shlex.split(line.split("#")[0])[:2]) for line in text.splitlines()
                if re.match(r"\s*dask[ -]", line)}
    assert commands and all(command[0] == "dask" for command in commands), commands
    dask = Path(sys.executable).with_name("dask")
    for command in commands:
        run = subprocess.run([str(dask), command[1], "--help"], capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, f"{' '.join(command)} --help: {run.stderr}"
