"""svm_light's kernels (-t): the kernel functions, Gram matrices and expansions, and the Nystroem map that trains
them as a linear model over a basis."""
