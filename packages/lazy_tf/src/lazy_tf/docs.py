"""Generate the supported-API section of ``docs/lazy_tf.md`` from the dispatch table.

``python -m lazy_tf.docs docs/lazy_tf.md`` rewrites the text between the markers
``<!-- api-table:start -->`` and ``<!-- api-table:end -->``.
"""

from __future__ import annotations

import sys

START, END = "<!-- api-table:start -->", "<!-- api-table:end -->"
_KINDS = {"unary": "unary elementwise dispatcher", "binary": "binary elementwise dispatcher",
          "api": "dispatch_for_api", "patch": "wrapped TF symbol (no dispatch hook)"}


def supported_api_markdown() -> str:
    from . import API, _dispatch

    groups: dict[str, list] = {}
    for name in sorted(API):
        ns = name.split(".")[0] if "." in name else "tf"
        groups.setdefault(ns, []).append(API[name])
    spaces = ", ".join(f"`tf{'.' + ns if ns else ''}`" for ns in _dispatch._NAMESPACES)
    lines = [f"{len(API)} TensorFlow APIs run lazily. Any other dispatchable API in {spaces} "
             "still works on lazy tensors by running eagerly on a copy of its inputs "
             "(counted as `fallback::<api>`).", ""]
    for ns in sorted(groups):
        lines += [f"### `{'tf' if ns == 'tf' else 'tf.' + ns}`", "",
                  "| API | lowers to (core) | hooked through |", "|---|---|---|"]
        for e in groups[ns]:
            how = _KINDS[e.kind]
            lines.append(f"| `tf.{e.name}` | {e.lowers_to} | {how} |")
        lines.append("")
    return "\n".join(lines)


def update(path: str) -> None:
    with open(path) as f:
        text = f.read()
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    with open(path, "w") as f:
        f.write(f"{head}{START}\n{supported_api_markdown()}\n{END}{tail}")


if __name__ == "__main__":
    update(sys.argv[1] if len(sys.argv) > 1 else "docs/lazy_tf.md")
