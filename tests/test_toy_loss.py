"""Adding a loss takes one module and one registration (docs/ARCHITECTURE.md walks through exactly this):
the CLI and the estimators then accept the loss and its new option, and the generic contract battery tests it."""
import inspect

import numpy as np
import pytest

from svmstruct import cli, model, registry, testing
from svmstruct.io import data
from svmstruct.testing import loss_battery

import toy_loss
from conftest import ROOT, invoke_here

TRAIN = ROOT / "data" / "mq2008-small" / "train.txt"


@pytest.fixture
def toy_registered():
    registry.register(toy_loss)
    yield
    registry.unregister(toy_loss)


def test_a_registered_loss_with_a_new_option_trains_from_the_unchanged_cli(toy_registered, tmp_path, capsys):
    interface = [ROOT / "svmstruct" / "cli.py", *sorted((ROOT / "svmstruct" / "commands").glob("*.py"))]
    cli_source = [path.read_bytes() for path in interface]
    m = tmp_path / "toy.model"
    cli.main(["learn", "-l", "toy", "--toy-option", "3", "-c", "1", "-v", "0", str(TRAIN), str(m)])
    trained = model.load_model(str(m))
    assert trained.loss == "toy" and trained.options == {"toy_option": "3"}
    assert trained.header["converged"] == "1"
    # the margin matters: with --toy-option 3 the scores are spread about three times wider than with 1
    cli.main(["learn", "-l", "toy", "--toy-option", "1", "-c", "1", "-v", "0", str(TRAIN), str(tmp_path / "one")])
    dataset = data.read_svmlight(str(TRAIN))
    spread3 = np.std(trained.predict(dataset))
    spread1 = np.std(model.load_model(str(tmp_path / "one")).predict(dataset))
    assert 2.0 < spread3 / spread1 < 4.0
    cli.main(["classify", str(TRAIN), str(m), str(tmp_path / "scores")])
    assert len((tmp_path / "scores").read_text().splitlines()) == dataset.n_docs
    # the new option is the toy's alone, and the help lists it
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["learn", "-l", "map", "--toy-option", "3", str(TRAIN), str(tmp_path / "x")])
    assert exit_info.value.code == 2 and "--toy-option does not apply to loss map" in capsys.readouterr().err
    cli.main(["learn", "--help"])
    assert "--toy-option M" in capsys.readouterr().out
    assert [path.read_bytes() for path in interface] == cli_source  # the interface was not touched to get here


def test_the_contract_battery_runs_on_the_new_loss(toy_registered, tmp_path, capsys):
    """The public battery (svmstruct.testing.check_loss) runs on the new loss, with its option at the default and at
    the example value it declares; learn and classify take it from the command line."""
    assert {"toy_option": 2} in list(loss_battery.option_sets(registry.REGISTRY["toy"]))
    testing.check_loss("toy")
    train_file = str(ROOT / "data" / "mq2008-small" / "train.txt")
    model_file, out = tmp_path / "m.model", tmp_path / "out.txt"
    learned = invoke_here("learn", "-l", "toy", "-c", "1", "-#", "200", "-v", "0", train_file, str(model_file))
    assert learned.returncode == 0, learned.stderr
    assert invoke_here("classify", train_file, str(model_file), str(out)).returncode == 0
    np.testing.assert_allclose([float(v) for v in out.read_text().split()],
                               model.load_model(str(model_file)).predict(data.read_svmlight(train_file)), atol=5e-9)


def test_the_estimator_takes_the_new_option_as_a_parameter(toy_registered):
    """The toy is a loss of family perf: SVMPerf takes loss="toy" and toy_option (its parameters are generated
    from the registry), clones with it and trains with it, estimators.py untouched."""
    from sklearn.base import clone

    from svmstruct import SVMPerf

    source = (ROOT / "svmstruct" / "estimators.py").read_bytes()
    assert "toy_option" in inspect.signature(SVMPerf).parameters
    dataset = data.read_svmlight(str(TRAIN))
    X, y = dataset.X, np.where(dataset.y > 0, 1, -1)
    wide = SVMPerf(loss="toy", toy_option=3, C=1.0).fit(X, y)
    narrow = clone(wide).set_params(toy_option=1).fit(X, y)
    assert wide.get_params()["toy_option"] == 3 and wide.model_.options == {"toy_option": 3}
    assert 2.0 < np.std(wide.decision_function(X)) / np.std(narrow.decision_function(X)) < 4.0
    assert (ROOT / "svmstruct" / "estimators.py").read_bytes() == source


def test_without_the_loss_the_estimator_has_no_such_parameter():
    from svmstruct import SVMPerf

    assert "toy_option" not in inspect.signature(SVMPerf).parameters
    with pytest.raises(TypeError, match="toy_option"):
        SVMPerf(loss="toy", toy_option=3)
