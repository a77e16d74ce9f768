"""lazytensor demo (placeholder until the torch frontend lands).

Records a small computation lazily, materializes it (a barrier: compile through XLA
and run), and prints the core's metrics. The lead will adjust this to the final API.
"""

import numpy as np

import lazycore as lc

print("lazycore demo")
x = lc.asarray(np.arange(6.0).reshape(2, 3))
y = x * 2 + 1
print(lc.to_numpy(y))
print(lc.metrics.report())
