# ruff: noqa: B007, E741, UP004, UP031 - the authors' own code, kept as published
"""Conway's Game of Life, N. P. Rougier, *From Python to Numpy* (2017), section 4.3
("Uniform vectorization", the NumPy implementation): neighbours counted with eight
shifted slices, the rules applied with boolean arrays and an in-place update of a view
(``Z[1:-1, 1:-1][birth | survive] = 1``). Published size: the book's animation runs
``iterate`` on a 256×512 random board (``np.random.randint(0, 2, (256, 512))``).
"""

import numpy

SOURCE = "Rougier, From Python to Numpy, 4.3 Game of Life (numpy), 256x512 board"
SIZES = {"tiny": {"shape": (12, 16), "steps": 4},
         "published": {"shape": (256, 512), "steps": 10},
         "10x": {"shape": (810, 1620), "steps": 5}}
ITER_KEY = "steps"  # the loop count: a run cut to two iterations counts compiles
STATE = ("Z",)


def make_inputs(shape, steps, seed=0):
    rng = numpy.random.RandomState(seed)
    return {"Z": rng.randint(0, 2, shape), "steps": steps}


def iterations(inputs):
    return inputs["steps"]


def program(np, inputs):
    def iterate(Z):
        # Count neighbours
        N = (Z[0:-2, 0:-2] + Z[0:-2, 1:-1] + Z[0:-2, 2:] +
             Z[1:-1, 0:-2]                + Z[1:-1, 2:] +
             Z[2:  , 0:-2] + Z[2:  , 1:-1] + Z[2:  , 2:])

        # Apply rules
        birth = (N == 3) & (Z[1:-1, 1:-1] == 0)
        survive = ((N == 2) | (N == 3)) & (Z[1:-1, 1:-1] == 1)
        Z[...] = 0
        Z[1:-1, 1:-1][birth | survive] = 1
        return Z

    Z = inputs["Z"]
    for i in range(inputs["steps"]):
        iterate(Z)
    return (Z,)
