"""CIFAR-10-shaped data for the cs231n programs (the benchmark needs no download):
images as float64 rows of 3072 pixels, mean-subtracted as in the assignment notebook,
labels 0..9. The programs' cost depends on the shapes only."""

import numpy


def images(num, seed, bias=True):
    rng = numpy.random.RandomState(seed)
    X = rng.randint(0, 256, size=(num, 32 * 32 * 3)).astype(numpy.float64)
    X -= X.mean(axis=0)
    if bias:  # the softmax notebook's bias trick: a column of ones
        X = numpy.hstack([X, numpy.ones((X.shape[0], 1))])
    y = rng.randint(0, 10, size=num)
    return X, y
