"""`svmstruct classify`: score a file with a model (ours or the originals'), in the model's output format."""
from __future__ import annotations

import os

import click

from svmstruct.commands.params import THREADS_OPTION, Integer, Tag, build_command, say
from svmstruct.errors import UsageError
from svmstruct.options import SCORE_FORMATS
from svmstruct.spec import Problem


def classify_command(output_format, tag, verbosity, problem, beam, test_file, model_file, output):
    """Score TEST_FILE with MODEL_FILE (ours or svm_light/svm_perf/svm_rank's); write to OUTPUT (default stdout)."""
    import numpy as np

    from svmstruct import model, registry
    from svmstruct.io import data, files, trec

    os.environ["SVMSTRUCT_SAY_COMPILING"] = "1" if verbosity >= 1 else "0"  # (compute.jit)
    if test_file == files.STDIO and model_file == files.STDIO:
        raise UsageError("TEST_FILE and MODEL_FILE cannot both be read from stdin")
    files.check_distinct([("OUTPUT", output)], [("TEST_FILE", test_file), ("MODEL_FILE", model_file)])
    files.check_writable(output)
    trained = model.load_model(model_file)
    source = files.display_name(model_file)
    loss = registry.of_model(trained, problem, source)
    if isinstance(loss, Problem):  # a structured problem's model: the problem's own predictions
        overrides = {"beam": beam} if beam is not None else None
        files.write_output(output, loss.predict(trained, test_file, source, overrides))
        return
    if problem is not None or beam is not None:
        raise UsageError(f"{'--problem' if problem is not None else '--b'} applies to a model of a structured problem "
                         f"(this model's loss is {trained.loss})")
    formats = loss.formats if loss else SCORE_FORMATS
    fmt = output_format or formats[0]
    if fmt not in formats:
        raise UsageError(f"--format {fmt} does not apply to a {trained.loss} model (it writes {', '.join(formats)})")
    dtype = np.dtype(trained.precision)  # as learn stored its data
    if fmt == "scores" and (loss is None or loss.predict is None) and trained.normalize != "query" \
            and trained.kernel is None:  # a score a line: the file a part at a time (memory of one part's matrix)
        parts, n_docs = [], 0
        for part in data.read_parts(test_file, dtype):
            parts.append("".join(f"{s:.8f}\n" for s in model.score(trained, part)))
            n_docs += part.n_docs
        text = "".join(parts)
    else:
        dataset = data.read_svmlight(test_file, dtype=dtype)
        n_docs = dataset.n_docs
        if loss is not None and loss.predict is not None:
            text = loss.predict(trained, dataset, fmt, tag)
        else:
            scores = model.score(trained, dataset)
            text = trec.format_run(dataset, scores, tag) if fmt == "trec" else "".join(f"{s:.8f}\n" for s in scores)
    files.write_output(output, text)
    if verbosity >= 1:
        say(f"Scored {n_docs} documents of {'<stdin>' if test_file == files.STDIO else test_file} with {model_file}")



def command() -> click.Command:
    return build_command("classify", classify_command, [
        click.option("--format", "output_format", default=None, metavar="FORMAT",
                     help="scores: one %.8f score per input line (default); trec: `qid Q0 docid rank score tag`; "
                          "selections: a div model's K documents per candidate set (its default)."),
        click.option("--tag", type=Tag(), default="svmstruct", show_default=True, help="Run tag of the TREC format."),
        click.option("-v", "verbosity", type=Integer(0, 3), default=0,
                     help="1: print a line of statistics on stderr."),
        click.option("--problem", metavar="MODULE:CLASS", default=None,
                     help="The model's structured problem when it is yours (not one of svmstruct's): its module is "
                          "imported, and so runs, only when named here; it must be the model's."),
        click.option("--b", "beam", type=Integer(0, 1 << 20), default=None, metavar="WIDTH",
                     help="A model of --problem hmm: tag with svm_hmm's beam search of this width (0: exact Viterbi; "
                          "default: the model's), as svm_hmm_classify --b."),
        THREADS_OPTION,
        click.argument("test_file"),
        click.argument("model_file"),
        click.argument("output", default="-"),
    ])
