"""Classifiers of messages, fitted out of sample: simulated or real, the person's or the other
side's.

TF-IDF of word unigrams and bigrams under a logistic regression (scikit-learn), cross-fitted
over folds of whole conversations (`tasks.helpers.fitting.folds`): a fit scored on its own
messages would tell any two samples apart.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import Any

import numpy as np

from attunebench.stats import FloatArray
from attunebench.tasks.helpers.fitting import FOLDS, folds

SEED = 0  # the folds' deal, as the replay's crowd reference deals its own
NEEDS = "needs scikit-learn: pip install 'attunebench[simulators]'"
DESCRIPTION = (
    "TF-IDF of word 1-2-grams and logistic regression (scikit-learn), cross-fitted over "
    f"{FOLDS} folds of whole conversations"
)


def available() -> bool:
    return importlib.util.find_spec("sklearn") is not None


def _pipeline() -> Any:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    return make_pipeline(
        TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True),
        LogisticRegression(max_iter=1000),
    )


def cross_fitted(
    texts: Sequence[str], labels: Sequence[int], groups: Sequence[str]
) -> FloatArray | None:
    """Each text's probability of label 1 from a fit on the other folds' conversations; None
    where fewer than two conversations, or one class, leave nothing to fit."""
    from sklearn.model_selection import PredefinedSplit, cross_val_predict

    y = np.asarray(labels, dtype=np.int64)
    count = min(FOLDS, len(set(groups)))
    if count < 2 or len(set(y.tolist())) < 2:
        return None
    split = PredefinedSplit(folds(groups, SEED, count))
    found = cross_val_predict(_pipeline(), list(texts), y, cv=split, method="predict_proba")
    return np.asarray(found[:, 1], dtype=np.float64)


def fitted_on(texts: Sequence[str], labels: Sequence[int]) -> Any:
    """A classifier fitted on all these texts (to score texts it never saw)."""
    return _pipeline().fit(list(texts), np.asarray(labels, dtype=np.int64))


def scores(model: Any, texts: Sequence[str]) -> FloatArray:
    """Each text's probability of label 1 under a fitted classifier."""
    return np.asarray(model.predict_proba(list(texts))[:, 1], dtype=np.float64)
