"""Freeze BFCL's open-model rows into pytest_toolbench/scorer_lib/bfcl_handlers/registry.json.

Reads ``bfcl_eval/constants/model_config.py`` out of the pinned official wheel (``<data>/bfcl-eval/``) as source text
(``ast``, nothing of the wheel is imported or executed) and keeps every entry of ``local_inference_model_map``: the
registry name (``--model`` of ``bfcl generate``), the Hugging Face id the handler is built with, the display name, the
handler class, ``is_fc_model`` and ``underscore_to_dot``. Run from the repository root:

    .venv/bin/python scripts/make_bfcl_registry.py [../shared/data/bfcl-eval/bfcl_eval-2026.3.23-py3-none-any.whl]
"""

import ast
import hashlib
import json
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WHEEL = REPO.parent / "shared/data/bfcl-eval/bfcl_eval-2026.3.23-py3-none-any.whl"
OUT = REPO / "pytest_toolbench/scorer_lib/bfcl_handlers/registry.json"
FIELDS = ("model_name", "display_name", "url", "org", "license")


def rows(source: str) -> list[dict]:
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "local_inference_model_map":
            out = []
            for key, call in zip(node.value.keys, node.value.values):
                arguments = {keyword.arg: keyword.value for keyword in call.keywords}
                row = {"name": ast.literal_eval(key)}
                row.update({field: ast.literal_eval(arguments[field]) for field in FIELDS})
                row["handler"] = arguments["model_handler"].id
                row["is_fc_model"] = ast.literal_eval(arguments.get("is_fc_model", ast.Constant(True)))
                row["underscore_to_dot"] = ast.literal_eval(arguments.get("underscore_to_dot", ast.Constant(False)))
                out.append(row)
            return out
    raise SystemExit("local_inference_model_map not found")


def main() -> None:
    wheel = Path(sys.argv[1]) if len(sys.argv) > 1 else WHEEL
    with zipfile.ZipFile(wheel) as archive:
        source = archive.read("bfcl_eval/constants/model_config.py").decode("utf-8")
    document = {
        "generated_by": "scripts/make_bfcl_registry.py",
        "upstream": "bfcl-eval 2026.3.23 (gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8) "
                    "bfcl_eval/constants/model_config.py local_inference_model_map",
        "wheel_sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
        "model_config_sha256": hashlib.sha256(source.encode("utf-8")).hexdigest(),
        "rows": rows(source),
    }
    OUT.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT}: {len(document['rows'])} rows")


if __name__ == "__main__":
    main()
