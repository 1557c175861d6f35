"""The contract of every registered loss, checked generically over the registry by the public battery
(svmstruct.testing.check_loss: names, options, the oracle against exhaustive enumeration of its outputs on tiny
inputs, convergence with a certified gap, the model file round trip; a new loss is tested the moment it is
registered), and learn/classify through the command line. A broken oracle is caught and named.
"""
import dataclasses

import numpy as np
import pytest

from svmstruct import model, registry, testing
from svmstruct.io import data
from svmstruct.testing import loss_battery

from conftest import ROOT, invoke

LOSSES = sorted(registry.REGISTRY)
SMALL_RANKING = ROOT / "data" / "mq2008-small"
SMALL_DIV = ROOT / "data" / "div" / "small"


@pytest.mark.slow
@pytest.mark.parametrize("name", LOSSES)
def test_oracle_attains_the_best_enumerated_output(name, tmp_path):
    loss_battery.check_oracle(registry.REGISTRY[name], tmp_path)


@pytest.mark.parametrize("name", LOSSES)
def test_names_and_options(name):
    loss_battery.check_names_and_options(registry.REGISTRY[name])


@pytest.mark.slow
@pytest.mark.parametrize("name", LOSSES)
def test_training_converges_with_a_certified_gap_and_the_model_round_trips(name, tmp_path):
    loss_battery.check_training(registry.REGISTRY[name], tmp_path)


def test_a_broken_oracle_is_caught_and_named(tmp_path):
    """The battery on a loss whose oracle answers the zero constraint says which loss, options and tiny problem;
    check_loss takes a registered name (and refuses a spec the registry does not hold under its name)."""
    spec = registry.REGISTRY["map"]

    def broken(dataset, opts):
        problem = spec.build(dataset, opts)
        problem.most_violated = lambda scores: (np.zeros(len(scores)), 0.0)
        return problem

    with pytest.raises(AssertionError, match=r"map with its defaults, tiny problem \d+, random scores: the oracle's"):
        loss_battery.check_oracle(dataclasses.replace(spec, build=broken), tmp_path, trials=7)
    with pytest.raises(AssertionError, match="the registry does not find it"):
        testing.check_loss(dataclasses.replace(spec, build=broken), trials=2)
    testing.check_loss("errorrate", trials=4)


def small_training_set(loss):
    if loss.output == "subset":
        return data.read_svmlight(f"{SMALL_DIV}.svm"), {"subtopics": f"{SMALL_DIV}.qrels", "k": 3}
    return data.read_svmlight(str(SMALL_RANKING / "train.txt")), {}


@pytest.mark.slow
@pytest.mark.parametrize("name", LOSSES)
def test_learn_and_classify_through_the_command_line(name, tmp_path, capsys, run=invoke):
    """learn and classify as the shell runs them (run=invoke_here: in this process, for a loss registered here)."""
    loss = registry.REGISTRY[name]
    dataset, opts = small_training_set(loss)
    train_file = f"{SMALL_DIV}.svm" if loss.output == "subset" else str(SMALL_RANKING / "train.txt")
    flags = []
    for key, value in opts.items():
        flags += [registry.all_options()[key].flag, str(value)]
    model_file, out = tmp_path / "m.model", tmp_path / "out.txt"
    learned = run("learn", "-l", name, "-c", "1", "-#", "200", "-v", "0", *flags, train_file, str(model_file))
    assert learned.returncode == 0, learned.stderr
    classified = run("classify", train_file, str(model_file), str(out))
    assert classified.returncode == 0, classified.stderr
    lines = out.read_text().splitlines()
    if loss.predict is None:
        assert len(lines) == dataset.n_docs
        np.testing.assert_allclose([float(v) for v in lines], model.load_model(str(model_file)).predict(dataset),
                                   atol=5e-9)
    else:
        assert len(lines) == dataset.n_examples
