# ruff: noqa: B007, E741, UP004, UP031 - the authors' own code, kept as published
"""k-means by Lloyd's algorithm (expectation-maximization), J. VanderPlas, *Python
Data Science Handbook* (2016), "In Depth: k-Means Clustering", ``find_clusters``:
random initial centers, assign by nearest center, new centers as the mean of each
cluster (``np.array([X[labels == i].mean(0) for i in range(n_clusters)])``), stop when
``np.all(centers == new_centers)``. Published size: ``make_blobs(n_samples=300,
centers=4, cluster_std=0.60, random_state=0)``, ``find_clusters(X, 4)``. The book
assigns with scikit-learn's ``pairwise_distances_argmin``; here that one call is the
same computation written in NumPy (the benchmark does not depend on scikit-learn).
"""

import numpy

SOURCE = "VanderPlas, Python Data Science Handbook, find_clusters, 300 points, 4 clusters"
SIZES = {"tiny": {"n_samples": 40, "centers": 3},
         "published": {"n_samples": 300, "centers": 4},
         "10x": {"n_samples": 3000, "centers": 4}}
STATE = ()


def make_inputs(n_samples, centers, seed=0):
    """Isotropic Gaussian blobs as ``sklearn.datasets.make_blobs`` draws them."""
    rng = numpy.random.RandomState(seed)
    middles = rng.uniform(-10.0, 10.0, size=(centers, 2))
    labels = numpy.arange(n_samples) % centers
    X = middles[labels] + 0.60 * rng.standard_normal((n_samples, 2))
    return {"X": X[rng.permutation(n_samples)], "n_clusters": centers}


def iterations(inputs):
    return 1  # one run of find_clusters (to convergence)


def program(np, inputs):
    def pairwise_distances_argmin(X, Y):
        """scikit-learn's ``pairwise_distances_argmin(X, Y)`` (Euclidean)."""
        return np.argmin(((X[:, None, :] - Y[None, :, :]) ** 2).sum(axis=-1), axis=1)

    def find_clusters(X, n_clusters, rseed=2):
        # 1. Randomly choose clusters
        rng = np.random.RandomState(rseed)
        i = rng.permutation(X.shape[0])[:n_clusters]
        centers = X[i]

        while True:
            # 2a. Assign labels based on closest center
            labels = pairwise_distances_argmin(X, centers)

            # 2b. Find new centers from means of points
            new_centers = np.array([X[labels == i].mean(0)
                                    for i in range(n_clusters)])

            # 2c. Check for convergence
            if np.all(centers == new_centers):
                break
            centers = new_centers

        return centers, labels

    centers, labels = find_clusters(inputs["X"], inputs["n_clusters"])
    return centers, labels
