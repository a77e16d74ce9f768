"""An integer ``arange`` is known on the host when it is traced: NumPy code that reads
it (``np.random.choice(np.arange(n), k)``, CS231n's two-layer net) gets NumPy's values
with no sync and no host transfer, in every execution tier. Anything that changes the
array (a write, an in-place operator, a view's write) reads the lazy value again."""

from __future__ import annotations

import numpy as np
import pytest

import lazy_numpy as lnp
import lazycore as lc

pytestmark = pytest.mark.usefixtures("tier")  # every test in each tier (tests/conftest.py)


def _syncs() -> tuple:
    c = lc.metrics.counters()
    return c["syncs"], c["host_transfers"]


@pytest.mark.parametrize("args", [(50,), (3, 40, 7), (-5, 5), (10, 0, -3), (0,)])
def test_random_choice_of_an_integer_arange_needs_no_sync(args):
    lazy = lnp.arange(*args)
    before = _syncs()
    got = np.random.RandomState(3).choice(lazy, 20) if lazy.size else np.asarray(lazy)
    assert _syncs() == before, "the host read synced"
    want = (np.random.RandomState(3).choice(np.arange(*args), 20) if lazy.size
            else np.arange(*args))
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype


def test_the_host_copy_is_private():
    lazy = lnp.arange(6)
    host = np.asarray(lazy)
    host[0] = 99
    np.testing.assert_array_equal(np.asarray(lazy), np.arange(6))


@pytest.mark.parametrize("change", [
    lambda a: a.__iadd__(2),
    lambda a: a.__setitem__(slice(1, 3), -1),
    lambda a: a.__setitem__(4, 7),
    lambda a: a[2:].__setitem__(0, 5),  # through a view
    lambda a: np.add(a, 1, out=a),
])
def test_a_changed_arange_reads_its_new_value(change):
    lazy, eager = lnp.arange(8), np.arange(8)
    change(lazy)
    change(eager)
    np.testing.assert_array_equal(np.asarray(lazy), eager)


def test_derived_values_and_other_dtypes_are_read_lazily():
    np.testing.assert_array_equal(np.asarray(lnp.arange(5) * 3), np.arange(5) * 3)
    np.testing.assert_array_equal(np.asarray(lnp.arange(5)[::-1]), np.arange(5)[::-1])
    np.testing.assert_array_equal(np.asarray(lnp.arange(0.5, 4)), np.arange(0.5, 4))
    got = np.asarray(lnp.arange(2, 9, 2, dtype=np.uint8))
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, np.arange(2, 9, 2, dtype=np.uint8))


def test_an_arange_index_is_checked_at_the_call_without_a_program_check():
    probs = np.random.RandomState(0).rand(6, 4)
    y = np.array([0, 3, 1, 2, 2, 0])
    lazy = lnp.asarray(probs)
    pending = len(lc.checks.PENDING)
    got = lazy[lnp.arange(6), y]
    assert len(lc.checks.PENDING) == pending  # host labels are checked at the call too
    np.testing.assert_array_equal(np.asarray(got), probs[np.arange(6), y])
    for rows in ((7,), (-7, 0)):
        with pytest.raises(IndexError) as want:
            probs[np.arange(*rows), 0]
        with pytest.raises(IndexError) as err:
            lazy[lnp.arange(*rows), 0]
        assert str(want.value) in str(err.value)
