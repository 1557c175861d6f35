"""`svmstruct div-baseline`: the diversity baselines of Yue & Joachims 2008 (section 6)."""
from __future__ import annotations

import click

from svmstruct.commands.params import Integer, Tag, build_command


def div_baseline_command(test_file, output, method, K, output_format, tag, seed, **features_from):
    """Diverse subsets of TEST_FILE's candidate sets by a baseline of Yue & Joachims 2008 (section 6)."""
    from svmstruct.diversity import baselines, features, qrels
    from svmstruct.io import data, files

    config = features.FeatureConfig.parse(None, None, features_from["title_offset"], features_from["doc_features_from"])
    files.check_distinct([("OUTPUT", output)], [("TEST_FILE", test_file)])
    files.check_writable(output)
    dataset = data.read_svmlight(test_file)
    size = dataset.n_docs if output_format == "trec" else K
    subsets = baselines.baseline(dataset, method, size, config, seed)
    files.write_output(output, qrels.format_subsets(dataset, subsets, output_format, tag))



def command() -> click.Command:
    return build_command("div-baseline", div_baseline_command, [
        click.option("--method", type=click.Choice(["unweighted", "essential-pages", "random"]), default="unweighted",
                     show_default=True, help="unweighted word coverage, Essential Pages (TF log 1/DF) or random."),
        click.option("-k", "K", type=Integer(1), default=5, show_default=True, help="Retrieval size K."),
        click.option("--format", "output_format", type=click.Choice(["selections", "trec"]), default="selections",
                     show_default=True, help="selections: `qid docid ...` as classify writes for a div model; trec: "
                                             "the whole candidate set ranked in selection order."),
        click.option("--tag", type=Tag(), default="baseline", show_default=True, help="Run tag of the TREC format."),
        click.option("--title-offset", type=Integer(0), default=None,
                     help="Feature ids above this are title words (id - offset)."),
        click.option("--doc-features-from", type=Integer(1), default=None,
                     help="Feature ids from this on are not words."),
        click.option("--seed", type=Integer(0), default=0, show_default=True, help="Seed of the random baseline."),
        click.argument("test_file"),
        click.argument("output", default="-"),
    ])
