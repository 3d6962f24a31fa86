import numpy as np

from induce.metrics.correlation import mean_matrix, pearson_matrix


def test_pearson_matrix_matches_numpy():
    rng = np.random.default_rng(0)
    labels = list(rng.choice(["det", "nsubj", "obj", "case"], size=200, p=[0.4, 0.3, 0.2, 0.1]))
    x = rng.random((200, 5))
    x[:, 0] += np.array([label == "det" for label in labels])  # a "det" head
    names, r = pearson_matrix(x, labels)
    assert names[0] == "det" and sorted(names) == sorted(set(labels))
    for j, name in enumerate(names):
        y = np.array([label == name for label in labels], dtype=float)
        for i in range(5):
            assert np.isclose(r[i, j], np.corrcoef(x[:, i], y)[0, 1])
    assert r[0, 0] == r[:, 0].max()


def test_constant_columns_have_no_correlation():
    names, r = pearson_matrix(np.ones((3, 2)), ["a", "b", "a"])
    assert np.isnan(r).all()


def test_mean_matrix_is_each_heads_mean_weight_on_each_labels_edges():
    """The official script's statistic (sum_xy / sum_y): by hand, label by label."""
    rng = np.random.default_rng(1)
    labels = list(rng.choice(["det", "nsubj", "root"], size=50))
    x = rng.random((50, 3))
    names, mean = mean_matrix(x, labels)
    assert names == pearson_matrix(x, labels)[0]
    for j, name in enumerate(names):
        rows = [e for e, label in enumerate(labels) if label == name]
        assert np.allclose(mean[:, j], x[rows].mean(0))
    _, one = mean_matrix(np.ones((3, 2)), ["a", "a", "a"])  # one label: no nan, unlike r
    assert one.tolist() == [[1.0], [1.0]]
