# ruff: noqa: B007, E741, UP004, UP031 - the authors' own code, kept as published
"""Mandelbrot set, N. P. Rougier, *From Python to Numpy* (2017), section 5.2
("Temporal vectorization", ``mandelbrot_numpy``): every pixel iterates at once, the
points still inside the horizon selected by a boolean mask, updated by masked
assignment. Published size: ``xn, yn = 3000/3, 2500/3`` (1000×833), ``maxiter = 200``;
the benchmark runs the first ``maxiter`` iterations it is given (warm time is quoted
per iteration).
"""


SOURCE = "Rougier, From Python to Numpy, 5.2 mandelbrot_numpy, 1000x833 pixels"
SIZES = {"tiny": {"xn": 24, "yn": 20, "maxiter": 6},
         "published": {"xn": 1000, "yn": 833, "maxiter": 8},
         "10x": {"xn": 3162, "yn": 2634, "maxiter": 4}}
ITER_KEY = "maxiter"  # the loop count: a run cut to two iterations counts compiles
STATE = ()
# complex64 iterates: a 1-ulp difference in z*z grows with every iteration (N must match)
TOLERANCE = (1e-3, 1e-5)


def make_inputs(xn, yn, maxiter):
    return {"xmin": -2.25, "xmax": +0.75, "xn": xn, "ymin": -1.25, "ymax": +1.25, "yn": yn,
            "maxiter": maxiter}


def iterations(inputs):
    return inputs["maxiter"]


def program(np, inputs):
    def mandelbrot_numpy(xmin, xmax, ymin, ymax, xn, yn, maxiter, horizon=2.0):
        X = np.linspace(xmin, xmax, xn, dtype=np.float32)
        Y = np.linspace(ymin, ymax, yn, dtype=np.float32)
        C = X + Y[:, None] * 1j
        N = np.zeros(C.shape, dtype=int)
        Z = np.zeros(C.shape, np.complex64)
        for n in range(maxiter):
            I = np.less(abs(Z), horizon)
            N[I] = n
            Z[I] = Z[I]**2 + C[I]
        N[N == maxiter - 1] = 0
        return Z, N

    i = inputs
    return mandelbrot_numpy(i["xmin"], i["xmax"], i["ymin"], i["ymax"], i["xn"], i["yn"],
                            i["maxiter"])
