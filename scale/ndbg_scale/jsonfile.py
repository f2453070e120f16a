"""Reading the JSON files ndbg writes (manifests, run configs) with one clear error each."""
from __future__ import annotations

import json


def read_json(path: str, error: type[Exception], missing: str) -> dict:
    """The parsed file; `error(path + ': ' + missing)` when it is absent, `error` naming the JSON problem when it is not JSON."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise error(f"{path} not found: {missing}") from None
    except json.JSONDecodeError as e:
        raise error(f"{path}: not valid JSON ({e})") from None
