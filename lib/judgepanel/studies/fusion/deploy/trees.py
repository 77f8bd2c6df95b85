"""The study's gradient-boosting combiner as plain arrays, and its prediction from them.

A fitted ``GradientBoostingRegressor`` is a constant plus the learning rate times the sum
of its regression trees. Each tree is five node arrays (left and right child, feature,
threshold, leaf value), so the whole model is a handful of numeric arrays that load
without running any code, unlike a pickle. :func:`predict_trees` walks them as sklearn
does: the features are cast to float32 (sklearn's tree dtype) and a sample goes left
where its value is at most the node's threshold.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from sklearn.ensemble import GradientBoostingRegressor

LEAF = -1
"""The child index sklearn gives a leaf."""

TREE_ARRAYS: tuple[str, ...] = (
    "tree_offsets",
    "children_left",
    "children_right",
    "feature",
    "threshold",
    "value",
)
"""The arrays :func:`tree_arrays` writes (all trees' nodes concatenated, offsets apart)."""


def tree_arrays(model: GradientBoostingRegressor) -> dict[str, NDArray]:
    """The fitted trees' nodes, concatenated; ``tree_offsets[i]`` is tree i's first node.

    Child indices stay local to their tree. Also ``init`` (the constant the trees start
    from) and ``learning_rate``, as 0-d arrays.
    """
    if not hasattr(model, "estimators_"):
        raise ValueError("the gradient-boosting model is not fitted")
    if model.estimators_.shape[1] != 1:
        raise ValueError("only single-output regression trees are supported")
    trees = [est.tree_ for est in model.estimators_[:, 0]]
    counts = np.array([t.node_count for t in trees], np.int64)
    init = np.asarray(model.init_.constant_, float).ravel()
    if init.size != 1:
        raise ValueError(f"expected one initial constant, got {init.size}")
    return {
        "tree_offsets": np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        "children_left": np.concatenate([t.children_left for t in trees]).astype(np.int64),
        "children_right": np.concatenate([t.children_right for t in trees]).astype(np.int64),
        "feature": np.concatenate([t.feature for t in trees]).astype(np.int64),
        "threshold": np.concatenate([t.threshold for t in trees]).astype(np.float64),
        "value": np.concatenate([t.value[:, 0, 0] for t in trees]).astype(np.float64),
        "init": np.asarray(init[0], np.float64),
        "learning_rate": np.asarray(model.learning_rate, np.float64),
    }


def check_tree_arrays(arrays: dict[str, NDArray], n_features: int) -> None:
    """Refuse arrays that do not describe well-formed trees over ``n_features`` columns."""
    missing = [k for k in (*TREE_ARRAYS, "init", "learning_rate") if k not in arrays]
    if missing:
        raise ValueError(f"the tree arrays lack {missing}")
    offsets = arrays["tree_offsets"]
    n_nodes = int(offsets[-1]) if offsets.size else 0
    if offsets.size < 2 or offsets[0] != 0 or np.any(np.diff(offsets) < 1):
        raise ValueError("tree_offsets must start at 0 and increase")
    for name in TREE_ARRAYS[1:]:
        if arrays[name].shape != (n_nodes,):
            raise ValueError(f"{name} has shape {arrays[name].shape}, expected ({n_nodes},)")
    sizes = np.repeat(np.diff(offsets), np.diff(offsets))
    for side in ("children_left", "children_right"):
        child = arrays[side]
        if np.any((child != LEAF) & ((child < 1) | (child >= sizes))):
            raise ValueError(f"{side} points outside its tree")
    inner = arrays["children_left"] != LEAF
    if np.any(inner & ((arrays["feature"] < 0) | (arrays["feature"] >= n_features))):
        raise ValueError(f"a split names a feature outside the {n_features} columns")


def predict_trees(arrays: dict[str, NDArray], X: NDArray) -> NDArray[np.float64]:
    """The boosted trees' prediction for the rows of ``X`` (no NaN allowed)."""
    X32 = np.asarray(X, np.float32)
    if X32.ndim != 2:
        raise ValueError(f"X must be 2-d, got shape {X32.shape}")
    if not np.isfinite(X32).all():
        raise ValueError("X holds NaN or infinite values; a missing feature has no prediction")
    offsets = arrays["tree_offsets"]
    left, right = arrays["children_left"], arrays["children_right"]
    feature, threshold, value = arrays["feature"], arrays["threshold"], arrays["value"]
    rows = np.arange(X32.shape[0])
    total = np.zeros(X32.shape[0])
    for start in offsets[:-1]:
        node = np.zeros(X32.shape[0], np.int64)
        while True:
            at = start + node
            inner = left[at] != LEAF
            if not inner.any():
                break
            go_left = X32[rows, np.where(inner, feature[at], 0)] <= threshold[at]
            nxt = np.where(go_left, left[at], right[at])
            node = np.where(inner, nxt, node)
        total += value[start + node]
    return float(arrays["init"]) + float(arrays["learning_rate"]) * total
