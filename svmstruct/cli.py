"""Command line: parse options, call the library, write output. No math here."""
from __future__ import annotations

import sys

import click
import numpy as np

from svmstruct.errors import InputError, SvmStructError

DEFAULT_C = 1.0
ALGORITHMS_1SLACK = ("3", "4")  # svm_perf/svm_struct -w values that mean the 1-slack algorithm


def _progress_printer(verbosity: int):
    def show(row: dict) -> None:
        if verbosity >= 1:
            click.echo(
                f"iter {row['iteration']:4d}  violation {row['violation']:.6g}  primal {row['primal']:.6f}  "
                f"dual {row['dual']:.6f}  constraints {row['constraints']}  {row['seconds']:.2f}s",
                err=True,
            )

    return show


def _loss_options(f):
    """Options read by the loss families' build(data, opts); each family uses the ones it knows."""
    options = [
        click.option("--b", "bias", type=float, default=1.0, show_default=True,
                     help="svm_perf losses: value of the constant feature appended to every example (0 = no bias)."),
        click.option("--p", "p", type=float, default=None,
                     help="Prec@k/Rec@k: k = p * #pos (svm_perf --p; default 0.5 for Prec@k, 2 for Rec@k)."),
        click.option("--beta", type=float, default=None, help="f1: the beta of F-beta (default 1)."),
        click.option("--per-query", is_flag=True, default=None,
                     help="svm_perf losses: every qid is an example and the loss is averaged over queries."),
        click.option("--rel-threshold", type=float, default=None,
                     help="A label above this is positive/relevant (default 0)."),
        click.option("--position-weights", default=None,
                     help="DORM losses: position weights c of Psi: pow:D ((i+1)^-D), log, loglog (default pow:0.5)."),
        click.option("--eru-alpha", type=float, default=None, help="eru: viewing half-life alpha (default 5)."),
        click.option("--eru-neutral", type=float, default=None, help="eru: neutral vote d (default 0)."),
        click.option("--subtopics", default=None, help="div: TREC diversity qrels `qid subtopic docid judgment`."),
        click.option("-k", "k", type=int, default=None,
                     help="div: retrieval size K (default 5); also the k of @k losses (prec@k, ndcg@k, ...)."),
        click.option("--levels", default=None,
                     help="div: importance levels, e.g. tf>=1,tf>=2,tf>=5,rf>=0.02,title,tfidf-top:10 (the default "
                          "without title)."),
        click.option("--df-thresholds", default=None,
                     help="div: thresholds on |D_l(v)|/n of the word features (default 0,0.02,...,0.8)."),
        click.option("--title-offset", type=int, default=None,
                     help="div: feature ids above this are title words (id - offset)."),
        click.option("--doc-features-from", type=int, default=None,
                     help="div: feature ids from this on are document features psi."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="svmstruct")
def cli():
    """Structural SVMs that optimise the measure you are judged by (1-slack cutting plane, OSQP, numba)."""


@cli.command()
@click.option("-c", "C", default=str(DEFAULT_C), show_default=True,
              help="Trade-off C of the 1-slack objective 1/2|w|^2 + C xi (svm_perf/svm_rank scaling, see README); "
                   "a comma-separated grid with --validate.")
@click.option("-e", "epsilon", type=float, default=None,
              help="Stop when no constraint is violated by more than this (default: the loss's, e.g. 0.1 for svm_perf losses).")
@click.option("-l", "loss_name", default="errorrate", show_default=True,
              help="Loss: a name or svm_perf's numeric code (see `svmstruct losses`).")
@click.option("-#", "max_iterations", type=int, default=100000, show_default=True, help="Maximum number of iterations.")
@click.option("-v", "verbosity", type=click.IntRange(0, 3), default=1, show_default=True,
              help="0 quiet; 1 one progress line per iteration and a summary on stderr.")
@click.option("-w", "algorithm", default="3", show_default=True,
              help="Accepted for svm_perf compatibility: 3 or 4 (both mean the 1-slack algorithm used here).")
@click.option("--format", "model_format", type=click.Choice(["svmstruct", "svmlight"]), default="svmstruct",
              show_default=True, help="Model file format; svmlight is readable by svm_perf_classify/svm_rank_classify.")
@click.option("--float32", "single_precision", is_flag=True,
              help="Store feature values in single precision, as svm_light does (half the memory).")
@click.option("--dense", is_flag=True, help="Store the training data as a dense matrix (less memory for dense data).")
@click.option("--validate", "validation_file", default=None,
              help="Validation data: train for every C of the -c grid and keep the best model by --select.")
@click.option("--select", "select_measure", default="map", show_default=True,
              help="Measure that picks C on the validation data (any `eval` measure; `error` is minimised).")
@_loss_options
@click.argument("train_file")
@click.argument("model_file")
def learn(C, epsilon, loss_name, max_iterations, verbosity, algorithm, model_format, single_precision, dense,
          validation_file, select_measure, train_file, model_file, **loss_opts):
    """Train on TRAIN_FILE (SVMlight, '-' for stdin) and write MODEL_FILE."""
    from svmstruct import data, losses, measures, model, selection, train

    if algorithm not in ALGORITHMS_1SLACK:
        raise InputError(f"-w {algorithm}: only the 1-slack algorithm (-w 3 or 4) is implemented")
    grid = selection.parse_grid(C)
    if len(grid) > 1 and validation_file is None:
        raise InputError("a grid of C values needs --validate VALIDATION_FILE to choose from")
    loss, name_opts = losses.lookup(loss_name)
    opts = {**loss_opts, **name_opts}
    dataset = data.read_svmlight(train_file, dtype=np.float32 if single_precision else np.float64,
                                 layout="dense" if dense else "sparse")
    eps = loss.default_epsilon if epsilon is None else epsilon
    if eps <= 0:
        raise InputError(f"-e must be positive, got {eps}")
    if validation_file is not None:
        try:
            measures.lookup(select_measure)
        except KeyError as e:
            raise InputError(e.args[0]) from None
        validation = data.read_svmlight(validation_file, n_features=dataset.n_features)
        say = (lambda line: click.echo(line, err=True)) if verbosity >= 1 else None
        best, _ = selection.select_C(loss, opts, dataset, validation, select_measure, grid, eps, max_iterations, say)
        trained, result = best.model, best.result
        if verbosity >= 1:
            click.echo(f"Selected C {best.C:g} (validation {select_measure} {best.value:.4f})", err=True)
    else:
        problem = loss.build(dataset, opts)
        if verbosity >= 1:
            stats = ", ".join(f"{k} {v}" for k, v in problem.info.items())
            click.echo(
                f"Training set {dataset.path}: {dataset.n_docs} documents, {dataset.n_features} features, "
                f"{problem.n} examples{', ' + str(problem.skipped) + ' skipped' if problem.skipped else ''}"
                f"{' (' + stats + ')' if stats else ''}; loss {loss.name}, C {grid[0]:g}, epsilon {eps:g}",
                err=True,
            )
        result = train.train(problem, grid[0], eps, max_iterations,
                             _progress_printer(verbosity) if verbosity >= 1 else None)
        trained = model.from_training(loss, opts, dataset, problem, result, grid[0], eps)
    if verbosity >= 1:
        click.echo(train.summary(result), err=True)
    text = model.format_svmlight(trained) if model_format == "svmlight" else model.format_model(trained)
    model.atomic_write(model_file, text)


@cli.command()
@click.option("--format", "output_format", type=click.Choice(["scores", "trec"]), default="scores", show_default=True,
              help="scores: one %.8f score per input line; trec: `qid Q0 docid rank score tag`.")
@click.option("--tag", default="svmstruct", show_default=True, help="Run tag of the TREC format.")
@click.option("-v", "verbosity", type=click.IntRange(0, 3), default=0, help="1: print a line of statistics on stderr.")
@click.argument("test_file")
@click.argument("model_file")
@click.argument("output", default="-")
def classify(output_format, tag, verbosity, test_file, model_file, output):
    """Score TEST_FILE with MODEL_FILE (ours or svm_light/svm_perf/svm_rank's); write to OUTPUT (default stdout)."""
    from svmstruct import data, model

    trained = model.load_model(model_file)
    dataset = data.read_svmlight(test_file)
    if trained.loss == "div":
        from svmstruct.losses import div

        _write_output(output, div.format_selections(trained, dataset, output_format, tag))
        return
    scores = model.score(trained, dataset)
    if output_format == "trec":
        from svmstruct import trec

        text = trec.format_run(dataset, scores, tag)
    else:
        text = "".join(f"{s:.8f}\n" for s in scores)
    _write_output(output, text)
    if verbosity >= 1:
        click.echo(f"Scored {dataset.n_docs} documents of {dataset.path} with {model_file}", err=True)


@cli.command(name="eval")
@click.option("-m", "measure_names", multiple=True,
              help="Measure to report (repeatable; `all` for every measure). Default: error, precision, recall, f1, "
                   "rocarea, map, ndcg@10.")
@click.option("-q", "per_query", is_flag=True, help="Also print the per-query values of per-query measures.")
@click.option("--format", "output_format", type=click.Choice(["trec", "table", "json"]), default="trec",
              show_default=True, help="trec: `measure<TAB>qid<TAB>value` lines with qid `all` for the summary.")
@click.option("--rel-threshold", type=float, default=0.0, show_default=True,
              help="A label above this is relevant / positive for binary measures.")
@click.option("--write-qrels", type=click.Path(dir_okay=False), default=None,
              help="Also write TEST_FILE's labels as TREC qrels to this file.")
@click.option("--subtopics", default=None,
              help="Diversity: subtopic qrels; PREDICTIONS are then `classify` selections of a div model and the "
                   "measures subtopic-loss, s-recall and alpha-ndcg at K = the selection size.")
@click.option("--alpha", type=float, default=0.5, show_default=True, help="alpha of alpha-NDCG.")
@click.argument("test_file")
@click.argument("predictions", nargs=-1, required=True)
def evaluate_command(measure_names, per_query, output_format, rel_threshold, write_qrels, subtopics, alpha, test_file,
                     predictions):
    """Measures of PREDICTIONS (one score per line of TEST_FILE) against TEST_FILE's labels.

    With several prediction files: a paired comparison against the first (means, per-query
    wins/losses, Wilcoxon signed-rank and paired t-test p-values).
    """
    from svmstruct import data, evaluate, measures, trec

    names = list(measure_names) or measures.DEFAULT_MEASURES
    if "all" in names:
        names = measures.ALL_MEASURES
    dataset = data.read_svmlight(test_file)
    if subtopics:
        from svmstruct.losses import div

        if len(predictions) > 1:
            raise click.UsageError("--subtopics evaluates one selections file at a time")
        table = div.evaluate_selections(dataset, subtopics, predictions[0], alpha)
        click.echo(evaluate.format_table(table, per_query, output_format), nl=False)
        return
    if write_qrels:
        _write_output(write_qrels, trec.format_qrels(dataset))
    runs = [(path, evaluate.read_predictions(path, dataset.n_docs)) for path in predictions]
    if len(runs) > 1:
        comparison = evaluate.compare(dataset, runs, names, rel_threshold)
        click.echo(evaluate.format_comparison(comparison, "json" if output_format == "json" else "table"), nl=False)
        return
    table = evaluate.measure_table(dataset, runs[0][1], names, rel_threshold)
    click.echo(evaluate.format_table(table, per_query, output_format), nl=False)


@cli.command()
@click.argument("test_file")
@click.argument("output", default="-")
def qrels(test_file, output):
    """Write TEST_FILE's labels as TREC qrels (`qid 0 docid label`) for trec_eval."""
    from svmstruct import data, trec

    _write_output(output, trec.format_qrels(data.read_svmlight(test_file)))


@cli.command(name="div-baseline")
@click.option("--method", type=click.Choice(["unweighted", "essential-pages", "random"]), default="unweighted",
              show_default=True, help="unweighted word coverage, Essential Pages (TF log 1/DF) or random.")
@click.option("-k", "K", type=click.IntRange(min=1), default=5, show_default=True, help="Retrieval size K.")
@click.option("--format", "output_format", type=click.Choice(["selections", "trec"]), default="selections",
              show_default=True, help="selections: `qid docid ...` as classify writes for a div model; trec: the "
                                      "whole candidate set ranked in selection order.")
@click.option("--tag", default="baseline", show_default=True, help="Run tag of the TREC format.")
@click.option("--title-offset", type=int, default=None, help="Feature ids above this are title words (id - offset).")
@click.option("--doc-features-from", type=int, default=None, help="Feature ids from this on are not words.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random baseline.")
@click.argument("test_file")
@click.argument("output", default="-")
def div_baseline(method, K, output_format, tag, title_offset, doc_features_from, seed, test_file, output):
    """Diverse subsets of TEST_FILE's candidate sets by a baseline of Yue & Joachims 2008 (section 6)."""
    from svmstruct import data, diversity
    from svmstruct.losses import div

    config = diversity.FeatureConfig.parse(None, None, title_offset, doc_features_from)
    dataset = data.read_svmlight(test_file)
    size = dataset.n_docs if output_format == "trec" else K
    subsets = div.baseline(dataset, method, size, config, seed)
    _write_output(output, div.format_subsets(dataset, subsets, output_format, tag))


def _write_output(path: str, text: str) -> None:
    from svmstruct import model

    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        model.atomic_write(path, text)


@cli.command(name="losses")
def list_losses():
    """List the losses with their names, aliases and default epsilon."""
    from svmstruct.losses import REGISTRY

    for loss in REGISTRY.values():
        aliases = ",".join(loss.aliases)
        click.echo(f"{loss.name:<14} {aliases:<12} {loss.family:<6} eps {loss.default_epsilon:<6g} {loss.summary}")


def main(argv=None) -> None:
    """Entry point: user errors become one line on stderr and a non-zero exit, never a traceback."""
    try:
        cli.main(args=argv, prog_name="svmstruct", standalone_mode=False)
    except SvmStructError as e:
        click.echo(f"svmstruct: error: {e}", err=True)
        sys.exit(e.exit_code)
    except click.exceptions.Abort:
        click.echo("svmstruct: aborted", err=True)
        sys.exit(130)
    except click.UsageError as e:
        hint = f" (see 'svmstruct {e.ctx.info_name} --help')" if e.ctx is not None and e.ctx.parent is not None else " (see 'svmstruct --help')"
        click.echo(f"svmstruct: error: {e.format_message()}{hint}", err=True)
        sys.exit(2)
    except click.ClickException as e:
        click.echo(f"svmstruct: error: {e.format_message()}", err=True)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        click.echo("svmstruct: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.stderr.close()
        sys.exit(141)
