"""The dispatch table itself: every entry resolves to a TF API whose parameters the
implementation accepts under the same names, and the docs list is generated from it."""

import inspect

import pytest

import lazy_tf as ltf
from lazy_tf import _dispatch
from lazy_tf._table import API, resolve

ENTRIES = sorted(API)


@pytest.mark.parametrize("name", ENTRIES)
def test_entry_matches_tf_signature(name):
    entry = API[name]
    api = resolve(name)
    assert api is not None, f"tf.{name} does not exist"
    tf_params = [p for p in inspect.signature(api).parameters if p != "name"]
    impl = inspect.signature(entry.impl).parameters
    positional = [p for p, v in impl.items() if v.kind == v.POSITIONAL_OR_KEYWORD and p != "name"]
    assert positional == tf_params[:len(positional)], (positional, tf_params)
    missing = set(tf_params) - set(impl)
    has_varargs = any(v.kind == v.VAR_POSITIONAL for v in impl.values())
    assert not missing or has_varargs, f"impl lacks TF parameters {missing}"


def test_every_entry_is_installed():
    assert set(_dispatch.REGISTERED) >= set(API)
    table = [n for n, how in _dispatch.REGISTERED.items() if how == "table"]
    assert len(table) >= 150


def test_docs_list_is_generated_from_the_table():
    from lazy_tf import docs

    text = docs.supported_api_markdown()
    for name in ENTRIES:
        assert f"`tf.{name}`" in text
    assert len(ltf.API) == len(ENTRIES)


def test_docs_page_is_up_to_date():
    import os

    from lazy_tf import docs

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "docs", "lazy_tf.md")) as f:
        page = f.read()
    assert docs.supported_api_markdown() in page, "run: python -m lazy_tf.docs docs/lazy_tf.md"
