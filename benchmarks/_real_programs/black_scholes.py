# ruff: noqa: B007, E741, UP004, UP031 - the authors' own code, kept as published
"""Black-Scholes European option pricing, the NumPy version of the classic benchmark
(NVIDIA CUDA SDK ``BlackScholes`` sample, as ported to NumPy in Numba's examples,
``blackscholes_numpy.py``): the cumulative normal by the Abramowitz-Stegun polynomial
with ``np.where``, call and put for every option at once. Published size:
``OPT_N = 4000000`` options, ``RISKFREE = 0.02``, ``VOLATILITY = 0.30``, prices
drawn uniformly (stock 5-30, strike 1-100, years 0.25-10).
"""

import numpy

SOURCE = "CUDA SDK / Numba examples, blackscholes_numpy, OPT_N = 4,000,000"
SIZES = {"tiny": {"OPT_N": 64},
         "published": {"OPT_N": 4_000_000},
         "10x": {"OPT_N": 40_000_000}}
STATE = ()


def make_inputs(OPT_N, seed=0):
    def randfloat(rand_var, low, high):
        return (1.0 - rand_var) * low + rand_var * high

    rng = numpy.random.RandomState(seed)
    return {"stockPrice": randfloat(rng.random_sample(OPT_N), 5.0, 30.0),
            "optionStrike": randfloat(rng.random_sample(OPT_N), 1.0, 100.0),
            "optionYears": randfloat(rng.random_sample(OPT_N), 0.25, 10.0),
            "Riskfree": 0.02, "Volatility": 0.30}


def iterations(inputs):
    return 1


def program(np, inputs):
    RSQRT2PI = 0.39894228040143267793994605993438
    A1 = 0.31938153
    A2 = -0.356563782
    A3 = 1.781477937
    A4 = -1.821255978
    A5 = 1.330274429

    def cnd(d):
        K = 1.0 / (1.0 + 0.2316419 * np.abs(d))
        ret_val = (RSQRT2PI * np.exp(-0.5 * d * d) *
                   (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5))))))
        return np.where(d > 0, 1.0 - ret_val, ret_val)

    def black_scholes(stockPrice, optionStrike, optionYears, Riskfree, Volatility):
        S = stockPrice
        X = optionStrike
        T = optionYears
        R = Riskfree
        V = Volatility
        sqrtT = np.sqrt(T)
        d1 = (np.log(S / X) + (R + 0.5 * V * V) * T) / (V * sqrtT)
        d2 = d1 - V * sqrtT
        cndd1 = cnd(d1)
        cndd2 = cnd(d2)

        expRT = np.exp(- R * T)

        callResult = (S * cndd1 - X * expRT * cndd2)
        putResult = (X * expRT * (1.0 - cndd2) - S * (1.0 - cndd1))
        return callResult, putResult

    i = inputs
    return black_scholes(i["stockPrice"], i["optionStrike"], i["optionYears"], i["Riskfree"],
                         i["Volatility"])
