"""`svmstruct eval`: trec_eval's measures and the papers' of predictions against labels, comparisons of runs,
and `svmstruct qrels`: a file's labels as TREC qrels."""
from __future__ import annotations

import click

from svmstruct.commands.params import THREADS_OPTION, Number, build_command, warn
from svmstruct.errors import InputError, UsageError


def evaluate_command(test_file, predictions, measure_names, output_format, subtopics, alpha, **shown):
    """Measures of PREDICTIONS (one score per line of TEST_FILE) against TEST_FILE's labels.

    With several prediction files: a paired comparison against the first (means, per-query
    wins/losses, Wilcoxon signed-rank and paired t-test p-values).
    """
    from svmstruct.dataset import documents
    from svmstruct.evaluation import measures, tables
    from svmstruct.io import data, files, trec

    per_query, rel_threshold, write_qrels = shown["per_query"], shown["rel_threshold"], shown["write_qrels"]

    if [test_file, *predictions].count(files.STDIO) > 1:
        raise UsageError("only one of TEST_FILE and PREDICTIONS can be read from stdin")
    if len(predictions) > 1 and (per_query or output_format == "trec"):
        raise UsageError(f"{'-q' if per_query else '--format trec'} is for one PREDICTIONS file (trec_eval's lines, "
                         "one run at a time); with several, eval prints their comparison (--format table or json)")
    if alpha is not None and not subtopics:
        raise UsageError("--alpha is alpha-NDCG's, a measure of --subtopics")
    alpha = 0.5 if alpha is None else alpha
    output_format = output_format or ("trec" if len(predictions) == 1 else "table")
    names = [measures.canonical(name) for name in measure_names] or measures.DEFAULT_MEASURES
    if "all" in names:
        names = measures.ALL_MEASURES
    if subtopics:
        if len(predictions) > 1:
            raise UsageError("--subtopics evaluates one selections file at a time")
    else:
        for name in names:
            try:
                measures.lookup(name)
            except KeyError as e:
                raise UsageError(e.args[0]) from None
    if write_qrels:
        files.check_distinct([("--write-qrels", write_qrels)], [("TEST_FILE", test_file), ("--subtopics", subtopics),
                                                             *(("PREDICTIONS", path) for path in predictions)])
        files.check_writable(write_qrels)
    dataset = data.read_svmlight(test_file, features=bool(subtopics))  # the measures read no feature
    if dataset.targets_only:
        raise InputError("no line has a qid or a feature after its label: this is a predictions file, not "
                         "labelled data (svmstruct eval TEST_FILE PREDICTIONS...)", dataset.path)
    if subtopics:
        from svmstruct.diversity import measures as div_measures

        table = div_measures.evaluate_selections(dataset, subtopics, predictions[0], alpha)
        files.write_output(files.STDIO, tables.format_table(table, per_query, output_format))
        return
    dataset, repeated = documents.in_line_order_if_repeated(dataset)
    if repeated:
        warn(repeated)
    if write_qrels:
        files.write_output(write_qrels, trec.format_qrels(dataset))
    runs = [(path, tables.read_predictions(path, dataset.n_docs)) for path in predictions]
    if len(runs) > 1:
        comparison = tables.compare(dataset, runs, names, rel_threshold)
        text = tables.format_comparison(comparison, "json" if output_format == "json" else "table")
    else:
        table = measures.measure_table(dataset, runs[0][1], names, rel_threshold)
        text = tables.format_table(table, per_query, output_format)
    files.write_output(files.STDIO, text)


def qrels_command(test_file, output):
    """Write TEST_FILE's labels as TREC qrels (`qid 0 docid label`) for trec_eval."""
    from svmstruct.io import data, files, trec

    files.check_distinct([("OUTPUT", output)], [("TEST_FILE", test_file)])
    files.check_writable(output)
    files.write_output(output, trec.format_qrels(data.read_svmlight(test_file, features=False)))



def command() -> click.Command:
    return build_command("eval", evaluate_command, [
        click.option("-m", "measure_names", multiple=True,
                     help="Measure to report (repeatable; `all` for every measure). Default: error, precision, recall, "
                          "f1, rocarea, map, ndcg@10."),
        click.option("-q", "per_query", is_flag=True, help="Also print the per-query values of per-query measures."),
        click.option("--format", "output_format", type=click.Choice(["trec", "table", "json"]), default=None,
                     help="trec (the default with one PREDICTIONS file): `measure<TAB>qid<TAB>value` lines with qid "
                          "`all` for the summary; table (the default with several: the comparison) or json."),
        click.option("--rel-threshold", type=Number(), default=0.0, show_default=True,
                     help="A label above this is relevant / positive for binary measures."),
        click.option("--write-qrels", default=None, help="Also write TEST_FILE's labels as TREC qrels to this file."),
        click.option("--subtopics", default=None,
                     help="Diversity: subtopic qrels; PREDICTIONS are then `classify` selections of a div model and "
                          "the measures subtopic-loss, s-recall and alpha-ndcg at K = the selection size."),
        click.option("--alpha", type=Number(0.0, 1.0), default=None,
                     help="With --subtopics: alpha of alpha-NDCG (the chance that a user misses a subtopic a document "
                          "covers).  [default: 0.5]"),
        THREADS_OPTION,
        click.argument("test_file"),
        click.argument("predictions", nargs=-1, required=True),
    ])


def qrels() -> click.Command:
    return build_command("qrels", qrels_command, [click.argument("test_file"), click.argument("output", default="-")])
