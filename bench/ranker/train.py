"""Fits the learned ranker of bench/ranker.ts with scikit-learn (issue 44, item 3).

Reads {features, rows: [{group, x, y}]} (one row per fused candidate of a tune question: its
channel features and whether it holds an evidence turn) and prints JSON: the model of all rows
(`all`, with the regularisation C chosen by leave-one-group-out log-loss) and one model per
left-out group (`byHeldOut`), so a conversation's figure can come from a model that did not see it.
Coefficients are in the features' own units (the standardisation is folded back in).

    pip install -r bench/ranker/requirements.txt
    python3 bench/ranker/train.py rows.json
"""
import json
import sys

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.model_selection import LeaveOneGroupOut
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

CS = [0.01, 0.1, 1.0, 10.0]


def fit(x, y, c):
    model = make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=2000))
    model.fit(x, y)
    return model


def unscaled(model):
    scaler, lr = model.named_steps["standardscaler"], model.named_steps["logisticregression"]
    scale = np.where(scaler.scale_ == 0, 1.0, scaler.scale_)
    coef = lr.coef_[0] / scale
    intercept = float(lr.intercept_[0] - np.sum(lr.coef_[0] * scaler.mean_ / scale))
    return {"coef": [float(v) for v in coef], "intercept": intercept}


def pairs(x, y, questions, rng, per_positive=20):
    """Pairwise rows (RankNet-style, linear): evidence minus non-evidence candidate of the same question, both signs."""
    diffs, labels = [], []
    for q in np.unique(questions):
        idx = np.where(questions == q)[0]
        pos, neg = idx[y[idx] == 1], idx[y[idx] == 0]
        if len(pos) == 0 or len(neg) == 0:
            continue
        for p in pos:
            for n in rng.choice(neg, size=min(per_positive, len(neg)), replace=False):
                diffs.append(x[p] - x[n])
                labels.append(1)
                diffs.append(x[n] - x[p])
                labels.append(0)
    return np.array(diffs), np.array(labels)


def fit_pairwise(x, y, questions, c, rng):
    d, l = pairs(x, y, questions, rng)
    scale = np.where(x.std(axis=0) == 0, 1.0, x.std(axis=0))
    lr = LogisticRegression(C=c, fit_intercept=False, max_iter=2000)
    lr.fit(d / scale, l)
    return {"coef": [float(v) for v in lr.coef_[0] / scale], "intercept": 0.0}


def main_pairwise(rows):
    x = np.array([r["x"] for r in rows], dtype=float)
    y = np.array([r["y"] for r in rows], dtype=int)
    groups = np.array([r["group"] for r in rows])
    questions = np.array([r["question"] for r in rows])
    rng = np.random.default_rng(44)
    c = 1.0
    by_held_out = {}
    for g in np.unique(groups):
        train = groups != g
        by_held_out[str(int(g))] = fit_pairwise(x[train], y[train], questions[train], c, rng)
    print(json.dumps({"all": {**fit_pairwise(x, y, questions, c, rng), "C": c}, "byHeldOut": by_held_out}))


def main():
    data = json.load(open(sys.argv[1]))
    rows = data["rows"]
    if len(sys.argv) > 2 and sys.argv[2] == "pairwise":
        return main_pairwise(rows)
    x = np.array([r["x"] for r in rows], dtype=float)
    y = np.array([r["y"] for r in rows], dtype=int)
    groups = np.array([r["group"] for r in rows])
    splitter = LeaveOneGroupOut()
    losses = {}
    for c in CS:
        total = 0.0
        for train, test in splitter.split(x, y, groups):
            model = fit(x[train], y[train], c)
            total += log_loss(y[test], model.predict_proba(x[test])[:, 1], labels=[0, 1]) * len(test)
        losses[c] = total / len(y)
    best = min(CS, key=lambda c: losses[c])
    by_held_out = {}
    for train, test in splitter.split(x, y, groups):
        by_held_out[str(int(groups[test][0]))] = unscaled(fit(x[train], y[train], best))
    print(json.dumps({"all": {**unscaled(fit(x, y, best)), "C": best, "logLoss": losses}, "byHeldOut": by_held_out}))


if __name__ == "__main__":
    main()
